package mcp_test

import (
	"context"
	"os/exec"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/catsrv/catsrv/adapters/mcp"
	"github.com/catsrv/catsrv/core/catconfig"
)

// The tool list is cached per session (listed again after
// tools/list_changed): BenchmarkToolsCached is a turn's Tools with the
// cache, BenchmarkToolsListed what each turn would cost without it, a
// tools/list round trip to the same stdio server.

func BenchmarkToolsCached(b *testing.B) {
	tb := mcp.New(mcp.Options{})
	defer tb.Close()
	cat := catWith(catconfig.MCPServer{Name: "files", Command: []string{testServer(b)}})
	ctx := context.Background()
	if specs, err := tb.Tools(ctx, cat, scope); err != nil || len(specs) == 0 {
		b.Fatalf("tools: %v %v", specs, err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := tb.Tools(ctx, cat, scope); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkToolsListed(b *testing.B) {
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &sdk.CommandTransport{Command: exec.Command(testServer(b))}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	b.ResetTimer()
	for b.Loop() {
		if _, err := sess.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}
