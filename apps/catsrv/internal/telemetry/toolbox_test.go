package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/catsrv/catsrv/adapters/mcp"
	"github.com/catsrv/catsrv/apps/catsrv/internal/telemetry"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
)

// toolServer is an MCP server over streamable HTTP with the tools ok,
// fail (reports a failure) and hang (answers when the test ends).
func toolServer(t *testing.T) string {
	t.Helper()
	release := make(chan struct{})
	s := sdk.NewServer(&sdk.Implementation{Name: "metrics-test", Version: "1"}, nil)
	type none struct{}
	sdk.AddTool(s, &sdk.Tool{Name: "ok"}, func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "fine"}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "fail"}, func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
		return nil, nil, context.Canceled // reported to the client as a tool error
	})
	sdk.AddTool(s, &sdk.Tool{Name: "hang"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ none) (*sdk.CallToolResult, any, error) {
		select {
		case <-ctx.Done():
		case <-release:
		}
		return nil, nil, ctx.Err()
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return srv.URL
}

// TestToolboxCounts: each call through the decorator of the real MCP
// adapter is counted and timed once, by server, tool and outcome; a name
// no listing gave is "unknown".
func TestToolboxCounts(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	url := toolServer(t)
	adapter := mcp.New(mcp.Options{})
	t.Cleanup(func() { _ = adapter.Close() })
	tb, err := telemetry.Toolbox(reg, adapter)
	if err != nil {
		t.Fatal(err)
	}
	cat := catconfig.Cat{Name: "c1"}
	cat.Chat.Agent.MCPServers = []catconfig.MCPServer{{Name: "crm", URL: url}}
	scope := chat.ToolScope{Cat: "c1", User: "u"}
	ctx := context.Background()
	if _, err := tb.Tools(ctx, cat, scope); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := tb.Call(ctx, cat, scope, "crm__ok", nil); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := tb.Call(ctx, cat, scope, "crm__fail", nil); err != nil || !out.IsError {
		t.Fatalf("fail = %+v, %v", out, err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := tb.Call(short, cat, scope, "crm__hang", nil); err == nil {
		t.Fatal("hang answered")
	}
	if _, err := tb.Call(ctx, cat, scope, "made_up_by_the_model", nil); err == nil {
		t.Fatal("an unknown tool answered")
	}

	want := map[[3]string]float64{
		{"crm", "ok", telemetry.OutcomeOK}:             2,
		{"crm", "fail", telemetry.OutcomeToolError}:    1,
		{"crm", "hang", telemetry.OutcomeTimeout}:      1,
		{"unknown", "unknown", telemetry.OutcomeError}: 1,
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			key := [3]string{labels["server"], labels["tool"], labels["outcome"]}
			switch f.GetName() {
			case "catsrv_tool_calls_total":
				seen[f.GetName()]++
				if got := m.GetCounter().GetValue(); got != want[key] {
					t.Errorf("calls %v = %v, want %v", key, got, want[key])
				}
			case "catsrv_tool_call_duration_seconds":
				seen[f.GetName()]++
				if got := float64(m.GetHistogram().GetSampleCount()); got != want[key] {
					t.Errorf("duration %v counted %v calls, want %v", key, got, want[key])
				}
			}
		}
	}
	if seen["catsrv_tool_calls_total"] != len(want) || seen["catsrv_tool_call_duration_seconds"] != len(want) {
		t.Errorf("series %v, want %d of each", seen, len(want))
	}
}
