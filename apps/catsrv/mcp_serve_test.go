package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/openai/openaitest"
)

// mcpCat writes a configuration directory with one CAT whose agent has
// the test MCP server of adapters/mcp as stdio servers: files (the
// server), and broken (no such command, so never up). With grandchild,
// a third, shell, is a script that starts a sleep in its process group
// before it runs the server.
func mcpCat(t *testing.T, grandchild bool) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	dir := t.TempDir()
	bin := mcpServerBinary(t)
	servers := fmt.Sprintf("      - name: files\n        command: [%q]\n      - name: broken\n        command: [%q]\n", bin, filepath.Join(dir, "missing"))
	if grandchild {
		script := filepath.Join(dir, "server.sh")
		if err := os.WriteFile(script, []byte("#!/bin/sh\nsleep 300 &\nexec "+bin+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		servers += fmt.Sprintf("      - name: shell\n        command: [%q]\n", script)
	}
	cfg := filepath.Join(dir, "configs")
	if err := os.Mkdir(cfg, 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := "cat:\n  chat_mode: agent\n  agent:\n    mcp_servers:\n" + servers
	if err := os.WriteFile(filepath.Join(cfg, "demo.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

var (
	mcpBuild    sync.Once
	mcpBin      string
	mcpBuildErr error
)

// mcpServerBinary builds adapters/mcp's test server once per test binary
// (next to the catsrv binary TestMain builds).
func mcpServerBinary(t *testing.T) string {
	t.Helper()
	mcpBuild.Do(func() {
		mcpBin = filepath.Join(filepath.Dir(binary), "mcpserver")
		if out, err := exec.Command("go", "build", "-o", mcpBin, "../../adapters/mcp/testdata/mcpserver").CombinedOutput(); err != nil {
			mcpBuildErr = fmt.Errorf("%w\n%s", err, out)
		}
	})
	if mcpBuildErr != nil {
		t.Fatalf("building the test MCP server: %v", mcpBuildErr)
	}
	return mcpBin
}

// proc is a process seen in /proc: its pid and start time (so a pid
// used again later is not taken for it).
type proc struct {
	pid   int
	start string
	comm  string
}

// procStat reads pid's parent, state, start time and command name.
func procStat(pid int) (ppid int, state, start, comm string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", "", "", false
	}
	s := string(b)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	f := strings.Fields(s[closing+1:]) // f[0] is field 3, the state
	if open < 0 || len(f) < 20 {
		return 0, "", "", "", false
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0], f[19], s[open+1 : closing], true
}

// descendants lists the processes below pid.
func descendants(pid int) []proc {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]proc{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _, start, comm, ok := procStat(p); ok {
			children[ppid] = append(children[ppid], proc{p, start, comm})
		}
	}
	var out []proc
	queue := []int{pid}
	for len(queue) > 0 {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
		queue = queue[1:]
	}
	return out
}

// running reports whether p still runs (not ended, not a zombie).
func running(p proc) bool {
	_, state, start, _, ok := procStat(p.pid)
	return ok && start == p.start && state != "Z"
}

// waitChildren waits until pid has n descendants named like want's
// entries and returns them.
func waitChildren(t *testing.T, pid int, want map[string]int, logs *syncBuffer) []proc {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		procs := descendants(pid)
		got := map[string]int{}
		for _, p := range procs {
			got[p.comm]++
		}
		ok := true
		for comm, n := range want {
			ok = ok && got[comm] == n
		}
		if ok {
			return procs
		}
		if time.Now().After(deadline) {
			t.Fatalf("children of serve: %v, want %v\n%s", got, want, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSIGTERMLeavesNoMCPServer: serve with CATSRV_MCP_EAGER_START starts
// a CAT's stdio MCP servers (a broken one leaves /readyz 200); on SIGTERM
// it stops them all, a server's own child included, before it exits.
func TestSIGTERMLeavesNoMCPServer(t *testing.T) {
	t.Parallel()
	cfg := mcpCat(t, true)
	s := startServe(t, cfg, "sqlite:"+filepath.Join(t.TempDir(), "c.db"), "CATSRV_MCP_EAGER_START=true")
	procs := waitChildren(t, s.proc.Pid, map[string]int{"mcpserver": 2, "sleep": 1}, s.logs)
	if code, _, _ := send(t, http.DefaultClient, "GET", s.base+"/readyz", ""); code != http.StatusOK {
		t.Fatalf("/readyz with a broken MCP server: %d", code)
	}
	if !strings.Contains(s.logs.String(), `"server":"broken"`) {
		t.Errorf("no log line about the broken server:\n%s", s.logs.String())
	}
	if err := s.proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := s.proc.Wait(); done <- err }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop within 30s of SIGTERM")
	}
	for _, p := range procs {
		if running(p) {
			t.Errorf("%s (pid %d) still runs after serve stopped", p.comm, p.pid)
		}
	}
}

// TestSIGKILLedServeStdioServersExit: when serve is killed outright, its
// stdio MCP servers see their stdin close and exit.
func TestSIGKILLedServeStdioServersExit(t *testing.T) {
	cfg := mcpCat(t, false)
	s := startServe(t, cfg, "sqlite:"+filepath.Join(t.TempDir(), "c.db"), "CATSRV_MCP_EAGER_START=true")
	procs := waitChildren(t, s.proc.Pid, map[string]int{"mcpserver": 1}, s.logs)
	if err := s.proc.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = s.proc.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for _, p := range procs {
		for running(p) {
			if time.Now().After(deadline) {
				t.Fatalf("%s (pid %d) still runs 20s after serve was killed", p.comm, p.pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// TestAgentTurnStartsAndCallsStdioServer: a turn in agent mode starts the
// CAT's stdio MCP server at its first use, the model's tool call reaches
// it and its result the model, /metrics counts the call, and SIGTERM
// leaves no server behind.
func TestAgentTurnStartsAndCallsStdioServer(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	model := openaitest.New(openaitest.Steps(
		openaitest.Reply{Calls: []openaitest.Call{{ID: "c1", Name: "files__add", Arguments: `{"a":2,"b":40}`}}},
		openaitest.Reply{Text: "The sum is 42."},
	))
	t.Cleanup(model.Close)
	cfg := filepath.Join(t.TempDir(), "configs")
	if err := os.Mkdir(cfg, 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := fmt.Sprintf("cat:\n  chat_mode: agent\n  agent:\n    base_url: %s\n    model: m\n    mcp_servers:\n      - name: files\n        command: [%q]\n",
		model.BaseURL(), mcpServerBinary(t))
	if err := os.WriteFile(filepath.Join(cfg, "demo.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, cfg, "sqlite:"+filepath.Join(t.TempDir(), "c.db"), "CATSRV_METRICS_ADDR=127.0.0.1:0")
	if procs := descendants(s.proc.Pid); len(procs) != 0 {
		t.Fatalf("MCP servers before any turn: %v", procs)
	}
	user := issueToken(t, cfg, "alice", "user")
	code, body, _ := send(t, nil, http.MethodPost, s.base+"/api/v1/cat/chat?catname=demo", `{"message":"what is 2 + 40?"}`, "Authorization", "Bearer "+user)
	if code != http.StatusOK || !strings.Contains(body, "The sum is 42.") {
		t.Fatalf("chat: %d %s\n%s", code, body, s.logs.String())
	}
	reqs := model.Requests()
	if len(reqs) != 2 || !slices.Contains(reqs[0].ToolNames(), "files__add") {
		t.Fatalf("model requests: %d, tools of the first %v", len(reqs), reqs[0].ToolNames())
	}
	msgs := reqs[1].Messages()
	if last := msgs[len(msgs)-1]; last["role"] != "tool" || last["content"] != "42" {
		t.Fatalf("the model's second request ends with %v, want the tool's result 42", last)
	}
	procs := waitChildren(t, s.proc.Pid, map[string]int{"mcpserver": 1}, s.logs)
	_, metrics, _ := send(t, nil, http.MethodGet, s.logURL(t, "metrics serving"), "")
	if !strings.Contains(metrics, `catsrv_tool_calls_total{outcome="ok",server="files",tool="add"} 1`) {
		t.Errorf("no tool call counted:\n%s", metrics)
	}
	if err := s.proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := s.proc.Wait(); done <- err }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop within 30s of SIGTERM")
	}
	for _, p := range procs {
		if running(p) {
			t.Errorf("%s (pid %d) still runs after serve stopped", p.comm, p.pid)
		}
	}
}
