package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/core/catconfig"
)

// TestExpandMCP: ${NAME} in an MCP server's env and header values comes
// from the environment Load read; an unset one is an error naming it;
// the configuration given is not changed.
func TestExpandMCP(t *testing.T) {
	c, err := Load([]string{"CRM_TOKEN=s3cret", "EMPTY=", "CATSRV_JWT_SECRET=x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := catconfig.MCPServer{Name: "crm", URL: "http://127.0.0.1:9/mcp",
		Env:     map[string]string{"TOKEN": "${CRM_TOKEN}", "LEVEL": "info", "E": "[${EMPTY}]"},
		Headers: map[string]string{"Authorization": "Bearer ${CRM_TOKEN}", "X-User": "{{user}}", "X-Literal": "$CRM_TOKEN"}}
	got, err := c.ExpandMCP(in)
	if err != nil {
		t.Fatal(err)
	}
	if got.Env["TOKEN"] != "s3cret" || got.Env["LEVEL"] != "info" || got.Env["E"] != "[]" ||
		got.Headers["Authorization"] != "Bearer s3cret" || got.Headers["X-User"] != "{{user}}" || got.Headers["X-Literal"] != "$CRM_TOKEN" {
		t.Errorf("expanded = %+v", got)
	}
	if in.Env["TOKEN"] != "${CRM_TOKEN}" || in.Headers["Authorization"] != "Bearer ${CRM_TOKEN}" {
		t.Errorf("the input changed: %+v", in)
	}
	_, err = c.ExpandMCP(catconfig.MCPServer{Name: "files", Env: map[string]string{"K": "${NOT_SET}"}})
	if err == nil || !strings.Contains(err.Error(), "NOT_SET") || !strings.Contains(err.Error(), "files") {
		t.Errorf("unset variable: err = %v", err)
	}
}

// TestMCPEnv: stdio MCP servers get the environment without catsrv's own
// variables.
func TestMCPEnv(t *testing.T) {
	c, err := Load([]string{"PATH=/usr/bin", "CATSRV_JWT_SECRET=never-to-a-child", "CATSRV_AGENT_API_KEY=k", "HOME=/root"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.MCPEnv(); !slices.Equal(got, []string{"PATH=/usr/bin", "HOME=/root"}) {
		t.Errorf("MCPEnv = %v", got)
	}
}
