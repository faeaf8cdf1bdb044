package chatapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
)

// TestChatOperationsAreDocumented checks that every /api/v1/cat operation
// requires the bearer scheme and documents its errors, and that the chat
// routes document both the JSON reply and the event stream.
func TestChatOperationsAreDocumented(t *testing.T) {
	raw, err := httpapi.OpenAPIDocument()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Security  []map[string][]string `json:"security"`
			Responses map[string]struct {
				Content map[string]json.RawMessage `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"/chat": "post", "/legacy_chat": "post", "/agent_chat": "post",
		"/conversations": "get", "/conversations/search": "get", "/conversations/{id}": "get,delete",
		"/conversations/{id}/rename": "put", "/config": "get", "/config/sync": "post",
	}
	for path, methods := range want {
		for method := range strings.SplitSeq(methods, ",") {
			t.Run(method+" "+path, func(t *testing.T) {
				op, ok := doc.Paths[chatapi.Prefix+path][method]
				if !ok {
					t.Fatal("not documented")
				}
				if len(op.Security) != 1 || op.Security[0]["bearer"] == nil {
					t.Errorf("security = %v, want bearer only", op.Security)
				}
				if _, ok := op.Responses["401"]; !ok {
					t.Error("no 401 response")
				}
				if strings.HasSuffix(path, "chat") {
					ok := op.Responses["200"].Content
					stream := string(ok["text/event-stream"])
					if ok["application/json"] == nil || !strings.Contains(stream, `"delta"`) || !strings.Contains(stream, `"done"`) || !strings.Contains(stream, `"error"`) {
						t.Errorf("200 content = %s", ok)
					}
					// The stream is text on the wire: a client generated for JSON must not decode it.
					var streamDoc struct {
						Schema struct {
							Type string `json:"type"`
						} `json:"schema"`
						Events json.RawMessage `json:"x-sse-events"`
					}
					if err := json.Unmarshal(ok["text/event-stream"], &streamDoc); err != nil || streamDoc.Schema.Type != "string" || len(streamDoc.Events) == 0 {
						t.Errorf("text/event-stream = %s, want a string schema and x-sse-events", stream)
					}
					for _, s := range []string{"502", "503", "504", "404", "422"} {
						if _, found := op.Responses[s]; !found {
							t.Errorf("no %s response", s)
						}
					}
				}
			})
		}
	}
}
