package mcp_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/mcp"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

var (
	buildOnce sync.Once
	serverBin string
	buildErr  error
)

// testServer builds testdata/mcpserver once per test binary.
func testServer(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		// Built into a directory kept between runs (one per checkout): go
		// build leaves an up-to-date binary as it is, sparing the link.
		wd, err := os.Getwd()
		if err != nil {
			buildErr = err
			return
		}
		sum := sha256.Sum256([]byte(wd))
		dir := filepath.Join(os.TempDir(), "catsrv-test-bin-"+hex.EncodeToString(sum[:6]))
		if err := os.MkdirAll(dir, 0o750); err != nil {
			buildErr = err
			return
		}
		serverBin = filepath.Join(dir, "mcpserver")
		out, err := exec.Command("go", "build", "-o", serverBin, "./testdata/mcpserver").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("building the test MCP server: %v", buildErr)
	}
	return serverBin
}

// startHTTP runs the test server as a process serving flag ("-http" or
// "-sse") and returns its URL.
func startHTTP(t *testing.T, flag string) string {
	t.Helper()
	cmd := exec.Command(testServer(t), flag, "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the server's address: %v", err)
	}
	return strings.TrimSpace(strings.TrimPrefix(line, "listening "))
}

// catWith is a CAT named "c1" with servers.
func catWith(servers ...catconfig.MCPServer) catconfig.Cat {
	c := catconfig.Cat{Name: "c1"}
	c.Chat.Agent.MCPServers = servers
	return c
}

// newToolbox returns a Toolbox with quick back-off, closed at the end.
func newToolbox(t testing.TB) *mcp.Toolbox {
	t.Helper()
	tb := mcp.New(mcp.Options{
		Logger:     slog.New(slog.NewTextHandler(testWriter{t}, nil)),
		Env:        []string{"PATH=" + os.Getenv("PATH")},
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		ConnectTimeout: 20 * time.Second, TerminateWait: 300 * time.Millisecond,
	})
	t.Cleanup(func() { _ = tb.Close() })
	return tb
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

var scope = chat.ToolScope{Cat: "c1", User: "alice"}

// call calls a tool and fails the test on an error.
func call(t *testing.T, tb *mcp.Toolbox, cat catconfig.Cat, name, args string) chat.ToolOutput {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := tb.Call(ctx, cat, scope, name, []byte(args))
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return out
}

// names lists the tool names of cat.
func names(t *testing.T, tb *mcp.Toolbox, cat catconfig.Cat) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	specs, err := tb.Tools(ctx, cat, scope)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}

// eventually retries f every 20 ms for up to 15 s until it reports true.
func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// transports are the three ways to reach the test server.
func transports(t *testing.T) map[string]func() catconfig.MCPServer {
	return map[string]func() catconfig.MCPServer{
		"stdio": func() catconfig.MCPServer {
			return catconfig.MCPServer{Name: "files", Command: []string{testServer(t)}}
		},
		"streamable HTTP": func() catconfig.MCPServer { return catconfig.MCPServer{Name: "files", URL: startHTTP(t, "-http")} },
		"SSE fallback":    func() catconfig.MCPServer { return catconfig.MCPServer{Name: "files", URL: startHTTP(t, "-sse")} },
	}
}

func TestToolsAndCalls(t *testing.T) {
	for name, server := range transports(t) {
		t.Run(name, func(t *testing.T) {
			tb := newToolbox(t)
			cat := catWith(server())
			ctx := context.Background()
			specs, err := tb.Tools(ctx, cat, scope)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range specs {
				if !validName.MatchString(s.Name) {
					t.Errorf("tool name %q breaks OpenAI's rules", s.Name)
				}
			}
			i := slices.IndexFunc(specs, func(s chat.ToolSpec) bool { return s.Name == "files__echo" })
			if i < 0 {
				t.Fatalf("no files__echo in %+v", specs)
			}
			if s := specs[i]; s.Server != "files" || s.Tool != "echo" || s.Description != "Returns its text." || !strings.Contains(string(s.Parameters), `"text"`) {
				t.Errorf("echo's spec = %+v (parameters %s)", s, s.Parameters)
			}
			if out := call(t, tb, cat, "files__echo", `{"text":"héllo"}`); out.Content != "héllo" || out.IsError {
				t.Errorf("echo = %+v", out)
			}
			if out := call(t, tb, cat, "files__add", `{"a":2,"b":40.5}`); out.Content != "42.5" || out.IsError {
				t.Errorf("add = %+v", out)
			}
			if out := call(t, tb, cat, "files__fail", `{}`); !out.IsError || !strings.Contains(out.Content, "failed on purpose") {
				t.Errorf("fail = %+v, want a tool error", out)
			}
			_, err = tb.Call(ctx, cat, scope, "files__nope", []byte(`{}`))
			if errs.KindOf(err) != errs.KindNotFound {
				t.Errorf("unknown tool: err = %v, want not found", err)
			}
			_, err = tb.Call(ctx, cat, scope, "files__echo", []byte(`{"text":`))
			if errs.KindOf(err) != errs.KindInvalid {
				t.Errorf("bad JSON: err = %v, want invalid", err)
			}
		})
	}
}

func TestStdioServerSharedByCalls(t *testing.T) {
	tb := newToolbox(t)
	cat := catWith(catconfig.MCPServer{Name: "files", Command: []string{testServer(t)}})
	first := call(t, tb, cat, "files__pid", `{}`).Content
	var wg sync.WaitGroup
	pids := make([]string, 8)
	for i := range pids {
		wg.Go(func() {
			out, err := tb.Call(context.Background(), cat, scope, "files__pid", []byte(`{}`))
			if err != nil {
				t.Error(err)
			}
			pids[i] = out.Content
		})
	}
	wg.Wait()
	for _, p := range pids {
		if p != first {
			t.Fatalf("pids %v, want all %s: one process for every call", pids, first)
		}
	}
}

func TestEnvReachesStdioServer(t *testing.T) {
	tb := newToolbox(t)
	// A shell script server: the env key decides which binary it runs.
	script := filepath.Join(t.TempDir(), "server.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec \"$MCP_BIN\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cat := catWith(catconfig.MCPServer{Name: "sh", Command: []string{script}, Env: map[string]string{"MCP_BIN": testServer(t)}})
	if out := call(t, tb, cat, "sh__echo", `{"text":"via env"}`); out.Content != "via env" {
		t.Errorf("echo = %+v", out)
	}
}

func TestDeadlineEndsCall(t *testing.T) {
	for name, server := range transports(t) {
		if name == "SSE fallback" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			tb := newToolbox(t)
			cat := catWith(server())
			call(t, tb, cat, "files__echo", `{"text":"warm"}`)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := tb.Call(ctx, cat, scope, "files__slow", []byte(`{"seconds":60}`))
			if !errors.Is(err, context.DeadlineExceeded) || errs.KindOf(err) != errs.KindUnavailable {
				t.Fatalf("err = %v, want an unavailable deadline error", err)
			}
			// The session outlives the call.
			if out := call(t, tb, cat, "files__echo", `{"text":"after"}`); out.Content != "after" {
				t.Errorf("echo after the time-out = %+v", out)
			}
		})
	}
}

func TestCrashedServerRestarts(t *testing.T) {
	tb := newToolbox(t)
	cat := catWith(catconfig.MCPServer{Name: "files", Command: []string{testServer(t)}})
	first := call(t, tb, cat, "files__pid", `{}`).Content
	_, _ = tb.Call(context.Background(), cat, scope, "files__crash", []byte(`{}`)) // the server exits mid-call
	var second string
	eventually(t, "a new server process", func() bool {
		out, err := tb.Call(context.Background(), cat, scope, "files__pid", []byte(`{}`))
		second = out.Content
		return err == nil && second != first
	})
	if second == "" {
		t.Fatal("no pid from the restarted server")
	}
	if alive(t, first) {
		t.Errorf("the crashed server %s is still a process", first)
	}
}

func TestFailingServerLeftOut(t *testing.T) {
	tb := newToolbox(t)
	cat := catWith(
		catconfig.MCPServer{Name: "broken", Command: []string{filepath.Join(t.TempDir(), "no-such-server")}},
		catconfig.MCPServer{Name: "files", Command: []string{testServer(t)}},
	)
	got := names(t, tb, cat)
	if !slices.Contains(got, "files__echo") || slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "broken") }) {
		t.Fatalf("tools = %v, want files' only", got)
	}
	_, err := tb.Call(context.Background(), cat, scope, "broken__echo", []byte(`{}`))
	if errs.KindOf(err) != errs.KindNotFound {
		t.Errorf("a tool of the broken server: err = %v, want not found", err)
	}
}

func TestServerStartedLaterJoins(t *testing.T) {
	// A server that fails to start is retried with back-off: once its
	// command exists, its tools appear.
	tb := newToolbox(t)
	bin := filepath.Join(t.TempDir(), "late-server")
	cat := catWith(catconfig.MCPServer{Name: "late", Command: []string{bin}})
	if got := names(t, tb, cat); len(got) != 0 {
		t.Fatalf("tools before the server exists = %v", got)
	}
	if err := os.Symlink(testServer(t), bin); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the late server's tools", func() bool { return slices.Contains(names(t, tb, cat), "late__echo") })
}

func TestToolListChanged(t *testing.T) {
	for name, server := range transports(t) {
		if name == "SSE fallback" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			tb := newToolbox(t)
			cat := catWith(server())
			if got := names(t, tb, cat); slices.Contains(got, "files__extra") {
				t.Fatalf("files__extra before grow: %v", got)
			}
			call(t, tb, cat, "files__grow", `{"name":"extra"}`)
			eventually(t, "files__extra in the tools", func() bool { return slices.Contains(names(t, tb, cat), "files__extra") })
			if out := call(t, tb, cat, "files__extra", `{}`); out.Content != "grown extra" {
				t.Errorf("extra = %+v", out)
			}
		})
	}
}

func TestHeadersFilledPerCall(t *testing.T) {
	tb := newToolbox(t)
	cat := catWith(catconfig.MCPServer{Name: "crm", URL: startHTTP(t, "-http"),
		Headers: map[string]string{"X-User": "u-{{user}}", "X-Cat": "{{cat}}"}})
	for _, user := range []string{"alice", "bob", "alice"} {
		out, err := tb.Call(context.Background(), cat, chat.ToolScope{Cat: "c1", User: user}, "crm__whoami", []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if want := "user=u-" + user + " cat=c1"; out.Content != want {
			t.Errorf("whoami = %q, want %q", out.Content, want)
		}
	}
	// A value that is no valid header value is left out, not sent.
	out, err := tb.Call(context.Background(), cat, chat.ToolScope{Cat: "c1", User: "eve\r\nX-Admin: 1"}, "crm__whoami", []byte(`{}`))
	if err != nil || out.Content != "user= cat=c1" {
		t.Errorf("whoami with a newline in the user = %+v, %v", out, err)
	}
}

func TestCloseStopsProcessGroup(t *testing.T) {
	tb := newToolbox(t)
	// The server starts a grandchild (sleep) in its process group and
	// writes its pid down: Close must end both.
	dir := t.TempDir()
	script := filepath.Join(dir, "server.sh")
	pidFile := filepath.Join(dir, "sleep.pid")
	body := "#!/bin/sh\nsleep 300 &\necho $! > " + pidFile + "\nexec " + testServer(t) + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	cat := catWith(catconfig.MCPServer{Name: "sh", Command: []string{script}})
	serverPid := call(t, tb, cat, "sh__pid", `{}`).Content
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	sleepPid := strings.TrimSpace(string(b))
	if !alive(t, serverPid) || !alive(t, sleepPid) {
		t.Fatalf("server %s or grandchild %s not running before Close", serverPid, sleepPid)
	}
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the grandchild's end", func() bool { return !alive(t, sleepPid) })
	if alive(t, serverPid) {
		t.Errorf("server %s still running after Close", serverPid)
	}
	_, err = tb.Tools(context.Background(), cat, scope)
	if errs.KindOf(err) != errs.KindUnavailable {
		t.Errorf("Tools after Close: err = %v, want unavailable", err)
	}
}

// alive reports whether pid is a process that has not ended (a zombie,
// ended but not reaped, counts as ended).
func alive(t *testing.T, pid string) bool {
	t.Helper()
	if _, err := strconv.Atoi(pid); err != nil {
		t.Fatalf("pid %q", pid)
	}
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z"
}

var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestSlowStartingServerDoesNotHoldOthers(t *testing.T) {
	tb := newToolbox(t)
	script := filepath.Join(t.TempDir(), "slow.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsleep 30\nexec "+testServer(t)+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cat := catWith(
		catconfig.MCPServer{Name: "slow", Command: []string{script}},
		catconfig.MCPServer{Name: "files", Command: []string{testServer(t)}},
	)
	// Tools waits for a starting server at most tool_timeout_seconds.
	cat.Chat.Agent.ToolTimeoutSeconds = 1
	specs, err := tb.Tools(context.Background(), cat, scope)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) == 0 || slices.ContainsFunc(specs, func(s chat.ToolSpec) bool { return s.Server == "slow" }) {
		t.Fatalf("tools = %+v, want files' only", specs)
	}
	// A call of a server that is up does not wait for the one starting.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := tb.Call(ctx, cat, scope, "files__echo", []byte(`{"text":"not held"}`))
	if err != nil || out.Content != "not held" {
		t.Fatalf("echo while slow starts = %+v, %v", out, err)
	}
}

func TestServerNamedTwiceFirstWins(t *testing.T) {
	tb := newToolbox(t)
	script := filepath.Join(t.TempDir(), "other.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec "+testServer(t)+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cat := catWith(
		catconfig.MCPServer{Name: "files", Command: []string{testServer(t)}},
		catconfig.MCPServer{Name: "files", Command: []string{script}},
	)
	first := call(t, tb, cat, "files__pid", `{}`).Content
	for range 3 {
		got := names(t, tb, cat)
		if n := len(slices.DeleteFunc(slices.Clone(got), func(s string) bool { return s != "files__echo" })); n != 1 {
			t.Fatalf("tools = %v: a name twice", got)
		}
		if pid := call(t, tb, cat, "files__pid", `{}`).Content; pid != first {
			t.Fatalf("pid %s then %s: the server was restarted", first, pid)
		}
	}
}
