package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/catconfig"
)

// everythingDir holds the package.json and package-lock.json pinning
// @modelcontextprotocol/server-everything.
const everythingDir = "../../tools/mcp-everything"

// TestEverythingServer runs the MCP project's reference server from npm
// (installed with npm ci as the lock file pins it) over stdio and calls
// two of its tools. Skipped under -short; under CI=true a missing node or
// npm fails it.
func TestEverythingServer(t *testing.T) {
	if testing.Short() {
		t.Skip("installs an npm package: not under -short")
	}
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node and npm are needed for the MCP everything-server test; CI=true requires them")
		}
		t.Skip("node or npm not found: skipping the MCP everything-server test")
	}
	dir, err := filepath.Abs(everythingDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}

	tb := newToolbox(t)
	cat := catWith(catconfig.MCPServer{Name: "everything", Command: []string{
		node, filepath.Join(dir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio",
	}})
	got := names(t, tb, cat)
	for _, want := range []string{"everything__echo", "everything__get-sum"} {
		if !slices.Contains(got, want) {
			t.Fatalf("tools = %v, want %s among them", got, want)
		}
	}
	if out := call(t, tb, cat, "everything__echo", `{"message":"hello from catsrv"}`); out.IsError || out.Content != "Echo: hello from catsrv" {
		t.Errorf("echo = %+v", out)
	}
	if out := call(t, tb, cat, "everything__get-sum", `{"a":19,"b":23}`); out.IsError || !strings.Contains(out.Content, "is 42") {
		t.Errorf("get-sum = %+v", out)
	}
	if out := call(t, tb, cat, "everything__get-sum", `{"a":"x"}`); !out.IsError {
		t.Errorf("get-sum with a string = %+v, want a tool error", out)
	}
}
