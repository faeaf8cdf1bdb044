package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
)

// TestAgentToolsWiring: the toolbox serve builds fills ${NAME} from the
// environment into an HTTP server's headers, leaves out a server naming
// an unset variable (logged once), and counts the calls in the registry.
func TestAgentToolsWiring(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "crm", Version: "1"}, nil)
	type none struct{}
	sdk.AddTool(s, &sdk.Tool{Name: "auth"}, func(_ context.Context, req *sdk.CallToolRequest, _ none) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: req.Extra.Header.Get("Authorization")}}}, nil, nil
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)

	cfg, err := config.Load([]string{"CRM_TOKEN=s3cret"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	var logs syncBuffer
	tools, stop, err := agentTools(cfg, nil, reg, slog.New(slog.NewJSONHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cat := catconfig.Cat{Name: "demo"}
	cat.Chat.Agent.MCPServers = []catconfig.MCPServer{
		{Name: "crm", URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer ${CRM_TOKEN}"}},
		{Name: "other", URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer ${NOT_SET}"}},
	}
	scope := chat.ToolScope{Cat: "demo", User: "alice"}
	for range 2 {
		specs, err := tools.Tools(t.Context(), cat, scope)
		if err != nil {
			t.Fatal(err)
		}
		if len(specs) != 1 || specs[0].Name != "crm__auth" {
			t.Fatalf("tools = %+v, want crm__auth only", specs)
		}
	}
	out, err := tools.Call(t.Context(), cat, scope, "crm__auth", []byte(`{}`))
	if err != nil || out.Content != "Bearer s3cret" {
		t.Fatalf("auth = %+v, %v", out, err)
	}
	if n := strings.Count(logs.String(), "NOT_SET"); n != 1 {
		t.Errorf("the unset variable logged %d times, want once:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "s3cret") {
		t.Errorf("the secret reached the log:\n%s", logs.String())
	}
	want := `
# HELP catsrv_tool_calls_total Tool calls of the agent's MCP servers, by server, tool and outcome.
# TYPE catsrv_tool_calls_total counter
catsrv_tool_calls_total{outcome="ok",server="crm",tool="auth"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "catsrv_tool_calls_total"); err != nil {
		t.Error(err)
	}
}
