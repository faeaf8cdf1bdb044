package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/client"
)

// tsClientDir is the TypeScript client program (tools/tsclient),
// relative to this package.
const tsClientDir = "../../tools/tsclient"

// nodeTools returns the paths of node and npm, or skips the test (fails it
// under CI=true). Under -short the test skips: npm ci and the TypeScript
// build take most of a minute.
func nodeTools(t *testing.T) (node, npm string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping a test that installs npm packages")
	}
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode == nil && errNpm == nil {
		return node, npm
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("node and npm are needed for this test; CI=true requires it")
	}
	t.Skip("node or npm not found: skipping this test")
	return "", ""
}

// inDir runs a command in dir and returns its standard output, failing the
// test with its output when it fails. The log names the command and its
// first argument only: the others may hold a token.
func inDir(ctx context.Context, t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), args[0], err, out.String(), errOut.String())
	}
	t.Logf("%s %s: %s", filepath.Base(name), args[0], time.Since(start).Round(time.Millisecond))
	return out.String()
}

// tsResult is what tools/tsclient/src/main.ts prints.
type tsResult struct {
	Health            string   `json:"health"`
	Cats              []string `json:"cats"`
	TotalInteractions int64    `json:"total_interactions"`
	Denied            struct {
		Status int     `json:"status"`
		Error  *string `json:"error"`
	} `json:"denied"`
	Chat struct {
		ConversationID string `json:"conversation_id"`
		Model          string `json:"model"`
		Message        string `json:"message"`
	} `json:"chat"`
	Stream struct {
		ContentType string               `json:"content_type"`
		Events      []string             `json:"events"`
		Deltas      string               `json:"deltas"`
		Done        *client.ChatResponse `json:"done"`
	} `json:"stream"`
	Conversations []string `json:"conversations"`
	Providers     []string `json:"providers"`
}

// TestTypeScriptClient generates TypeScript types with openapi-typescript
// from the document a running `catsrv serve` serves, type-checks the
// openapi-fetch program of tools/tsclient against them (tsc, strict), runs
// it against that server and compares its answers with the same calls made
// through the Go client. Needs Node.js and npm; the packages are installed
// as tools/tsclient/package-lock.json pins them.
func TestTypeScriptClient(t *testing.T) {
	t.Parallel()
	node, npm := nodeTools(t)
	dir, err := filepath.Abs(tsClientDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()

	inDir(ctx, t, dir, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	f := startClientFixture(t)
	inDir(ctx, t, dir, node, "node_modules/openapi-typescript/bin/cli.js", f.base+"/openapi.json", "-o", "src/schema.gen.ts")
	// Type-checks (strict, tsconfig.json) and compiles to dist/; nothing is
	// emitted when a type does not check.
	inDir(ctx, t, dir, node, "node_modules/typescript/bin/tsc", "-p", ".")
	out := inDir(ctx, t, dir, node, "dist/main.js", f.base, f.token, "demo")

	var ts tsResult
	if err := json.Unmarshal([]byte(out), &ts); err != nil {
		t.Fatalf("main.js printed no result: %v\n%s", err, out)
	}

	// The same calls through the Go client.
	gctx := t.Context()
	admin := f.newClient(t, f.token)
	demo := "demo"
	if ts.Health != "ok" {
		t.Errorf("healthz: %q", ts.Health)
	}
	cats, err := admin.GetCatsWithResponse(gctx)
	if err != nil || cats.JSON200 == nil {
		t.Fatalf("get_cats: %v %s", err, body(cats))
	}
	if want := catNames(cats.JSON200); !slices.Equal(ts.Cats, want) {
		t.Errorf("get_cats: TypeScript %v, Go %v", ts.Cats, want)
	}
	wh, err := admin.GetAllWarehouseWithResponse(gctx, &client.GetAllWarehouseParams{Catname: demo})
	if err != nil || wh.JSON200 == nil {
		t.Fatalf("all_warehouse: %v %s", err, body(wh))
	}
	// The program's two chats came after its analytics call, each one
	// interaction more.
	if ts.TotalInteractions != f.demo || wh.JSON200.TotalInteractions != f.demo+2 {
		t.Errorf("all_warehouse: TypeScript %d, then Go %d; imported %d", ts.TotalInteractions, wh.JSON200.TotalInteractions, f.demo)
	}
	if ts.Denied.Status != 401 || ts.Denied.Error == nil || *ts.Denied.Error != "UNAUTHORIZED" {
		t.Errorf("all without a token: %+v", ts.Denied)
	}

	reply, err := admin.PostChatWithResponse(gctx, &client.PostChatParams{Catname: &demo}, client.ChatRequest{Message: "How do I reset my password?"})
	if err != nil || reply.JSON200 == nil {
		t.Fatalf("chat: %v %s", err, body(reply))
	}
	if ts.Chat.ConversationID == "" || ts.Chat.Message != reply.JSON200.Message || ts.Chat.Model != reply.JSON200.Model {
		t.Errorf("chat: TypeScript %+v, Go %+v", ts.Chat, *reply.JSON200)
	}

	// The streamed chat, read as text by the TypeScript program: delta
	// events, then done with the reply they add up to.
	if !strings.HasPrefix(ts.Stream.ContentType, "text/event-stream") {
		t.Errorf("streamed chat: Content-Type %q", ts.Stream.ContentType)
	}
	if n := len(ts.Stream.Events); n < 2 || ts.Stream.Events[n-1] != "done" || slices.ContainsFunc(ts.Stream.Events[:n-1], func(e string) bool { return e != "delta" }) {
		t.Errorf("streamed chat: events %v, want deltas then done", ts.Stream.Events)
	}
	if d := ts.Stream.Done; d == nil || d.ConversationId != ts.Chat.ConversationID || d.Message != ts.Stream.Deltas || d.Message == "" {
		t.Errorf("streamed chat: done %+v, deltas %q, conversation %s", d, ts.Stream.Deltas, ts.Chat.ConversationID)
	}

	list, err := admin.ListConversationsWithResponse(gctx, &client.ListConversationsParams{Catname: &demo})
	if err != nil || list.JSON200 == nil {
		t.Fatalf("conversations: %v %s", err, body(list))
	}
	var ids []string
	for _, c := range list.JSON200.Conversations {
		ids = append(ids, c.Id)
	}
	// Newest first: the Go client's chat, then the TypeScript program's.
	if !slices.Equal(ts.Conversations, []string{ts.Chat.ConversationID}) || !slices.Equal(ids, []string{reply.JSON200.ConversationId, ts.Chat.ConversationID}) {
		t.Errorf("conversations: TypeScript %v, then Go %v", ts.Conversations, ids)
	}

	providers, err := admin.AuthProvidersWithResponse(gctx, &client.AuthProvidersParams{Catname: &demo})
	if err != nil || providers.JSON200 == nil {
		t.Fatalf("providers: %v %s", err, body(providers))
	}
	if want := providerNames(providers.JSON200); !slices.Equal(ts.Providers, want) || len(want) == 0 {
		t.Errorf("providers: TypeScript %v, Go %v", ts.Providers, want)
	}
}
