package catfiles_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/adapters/files/catfiles"
	"github.com/catsrv/catsrv/core/catconfig"
)

// TestAgentToolKeys: the agent's MCP servers and policy load from a
// CAT's file; an environment override cannot set the servers.
func TestAgentToolKeys(t *testing.T) {
	dir := t.TempDir()
	file := `cat:
  chat_mode: agent
  agent:
    max_steps: 5
    tool_timeout_seconds: 10
    approval_timeout_seconds: 60
    mcp_servers:
      - name: files
        command: ["my-mcp-server", "--root", "/srv/docs"]
        env: {LOG_LEVEL: info}
      - name: crm
        url: http://127.0.0.1:9000/mcp
        headers: {X-User: "{{user}}"}
    tools:
      - "crm/delete_* => ask"
      - "* => deny"
`
	if err := os.WriteFile(filepath.Join(dir, "demo.yaml"), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := catfiles.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Cat(t.Context(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	a := c.Chat.Agent
	want := []catconfig.MCPServer{
		{Name: "files", Command: []string{"my-mcp-server", "--root", "/srv/docs"}, Env: map[string]string{"LOG_LEVEL": "info"}},
		{Name: "crm", URL: "http://127.0.0.1:9000/mcp", Headers: map[string]string{"X-User": "{{user}}"}},
	}
	if !reflect.DeepEqual(a.MCPServers, want) || a.MaxSteps != 5 || a.ToolTimeoutSeconds != 10 || a.ApprovalTimeoutSeconds != 60 ||
		!reflect.DeepEqual(a.Tools, []string{"crm/delete_* => ask", "* => deny"}) {
		t.Fatalf("agent = %+v", a)
	}
	for bad, msg := range map[string]string{
		"cat:\n  agent:\n    mcp_servers: [files]\n":                                                                         "list of mappings",
		"cat:\n  agent:\n    mcp_servers:\n      - name: BAD\n        command: [x]\n":                                        "mcp_servers[0].name",
		"cat:\n  agent:\n    mcp_servers:\n      - name: a\n        url: http://x\n      - name: a\n        url: http://y\n": "used twice",
		"cat:\n  agent:\n    mcp_servers:\n      - name: a\n        url: http://x\n        command: [x]\n":                   "exactly one of command and url",
		"cat:\n  agent:\n    tools: [\"files/*\"]\n":                                                                         "cat.agent.tools[0]",
		"cat:\n  agent:\n    max_steps: 0\n":                                                                                 "max_steps",
	} {
		if err := os.WriteFile(filepath.Join(dir, "demo.yaml"), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := catfiles.Load(dir, nil); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want an error naming %q", bad, err, msg)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "demo.yaml"), []byte("cat: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = catfiles.Load(dir, []catfiles.Override{{Key: "cat.agent.mcp_servers", Value: "evil", Source: "CATSRV_CAT__CAT__AGENT__MCP_SERVERS"}})
	if err == nil || !strings.Contains(err.Error(), "list of mappings") {
		t.Errorf("override of mcp_servers: %v", err)
	}
}
