package chatapi

import (
	"context"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/sse"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/chat/service"
)

// maxChatBody bounds a chat request body: the largest message a CAT may
// allow, JSON-escaped, plus a context.
const maxChatBody = 8*catconfig.MaxMaxMessageBytes + 64<<10

// registerChat adds the three chat routes. They are SSE operations (huma's
// sse package) that answer plain JSON unless the request asks to stream.
func registerChat(api huma.API, c *chatAPI) {
	routes := []struct{ id, path, handler, summary, desc string }{
		{"postChat", "/chat", service.ByMode, "Chat, routed by cat.chat_mode",
			"Answers the message with the handler the CAT's chat_mode names (legacy, agent or custom routing)."},
		{"postLegacyChat", "/legacy_chat", service.Legacy, "Chat with the legacy pipeline",
			"Answers with the legacy pipeline whatever the chat mode."},
		{"postAgentChat", "/agent_chat", service.Agent, "Chat with the agent model",
			"Answers with the agent model whatever the chat mode; 503 when the CAT has no model endpoint."},
	}
	events := map[string]any{
		"delta": DeltaEvent{}, "done": ChatResponse{}, "error": base.ErrorBody{},
		chat.EventToolCall: ToolCallEvent{}, chat.EventToolResult: ToolResultEvent{}, chat.EventApprovalRequired: ApprovalRequiredEvent{},
	}
	for _, r := range routes {
		op := huma.Operation{
			OperationID: r.id,
			Method:      http.MethodPost,
			Path:        r.path,
			Summary:     r.summary,
			Description: r.desc + " With stream true, the reply comes as Server-Sent Events: delta events {text}, then one done " +
				"event with the chat response, or an error event {error, status, message}. An agent turn also reports its work: " +
				"tool_call {id, name, arguments} for each call the model makes, tool_result {id, name, ok, content} when it ends, " +
				"approval_required {approval_id, name, arguments, expires_at} when a call waits for POST /api/v1/cat/approvals/{approval_id}. " +
				"Errors found before the first event are plain JSON responses with their status. An agent turn past the CAT's " +
				"cat.budget.monthly_tokens or the caller's cat.budget.user_daily_tokens is 429 with Retry-After (seconds until the next UTC month or day).",
			Tags:         []string{tagChat},
			Security:     security,
			MaxBodyBytes: maxChatBody,
			Responses: errorResponses(api, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
				http.StatusUnprocessableEntity, http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
				http.StatusServiceUnavailable, http.StatusGatewayTimeout),
		}
		op.Responses["200"] = &huma.Response{
			Description: "The reply: JSON, or an event stream when stream is true.",
			Content: map[string]*huma.MediaType{"application/json": {
				Schema: api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[ChatResponse](), true, "ChatResponse"),
			}},
		}
		handler := r.handler
		sse.Register(api, op, events, func(ctx context.Context, in *chatInput, send sse.Sender) {
			c.chat(ctx, in, handler, send)
		})
		describeStream(api.OpenAPI().Paths[Prefix+op.Path].Post)
	}
}

// describeStream describes the text/event-stream answer as what it is on
// the wire, text, so that a client generated for JSON never tries to
// decode it as a JSON array (huma's sse package describes it as an array
// of events). The events' schemas stay in the document under x-sse-events,
// their names as one-value enums: const is OpenAPI 3.1 only, and the 3.0
// form of the document must stay valid.
func describeStream(op *huma.Operation) {
	if op == nil || op.Responses["200"] == nil {
		return
	}
	mt := op.Responses["200"].Content["text/event-stream"]
	if mt == nil || mt.Schema == nil || mt.Schema.Items == nil {
		return
	}
	variants, _ := mt.Schema.Items.Extensions["oneOf"].([]*huma.Schema)
	for _, v := range variants {
		if ev := v.Properties["event"]; ev != nil {
			if name, ok := ev.Extensions["const"]; ok {
				ev.Enum = []any{name}
				delete(ev.Extensions, "const")
			}
		}
	}
	events := mt.Schema.Items
	mt.Schema = &huma.Schema{
		Type: huma.TypeString,
		Description: "Server-Sent Events (UTF-8 text, not JSON): delta events (and an agent's tool_call, tool_result and " +
			"approval_required events), then one done or error event. " +
			"x-sse-events gives each event's schema.",
	}
	if mt.Extensions == nil {
		mt.Extensions = map[string]any{}
	}
	mt.Extensions["x-sse-events"] = events
}

// chat answers one chat request. Until the first event is sent, the
// response is still open, so failures get their own status and JSON body;
// afterwards they can only be an error event.
func (c *chatAPI) chat(ctx context.Context, in *chatInput, handler string, send sse.Sender) {
	w := base.ResponseOf(ctx)
	if w == nil {
		return // the route was registered without withRequest: nothing can be answered
	}
	who, err := c.authenticate(ctx, in.Cat)
	if err != nil {
		c.writeError(ctx, w, err)
		return
	}
	req := chat.Request{
		Cat: who.owner.Cat, UserID: who.owner.UserID, Message: in.Body.Message, Context: in.Body.Context,
		ConversationID: deref(in.Body.ConversationID), Model: deref(in.Body.Model),
		PersonaPreference: c.persona(ctx, who.owner.UserID),
	}
	if !in.Body.Stream {
		resp, err := c.d.Service.Chat(ctx, req, handler)
		if err != nil {
			c.writeError(ctx, w, err)
			return
		}
		base.WriteJSON(w, http.StatusOK, chatBody(resp))
		return
	}
	streaming := false
	resp, err := c.d.Service.Stream(ctx, req, handler, func(e chat.Event) error {
		streaming = true
		return send.Data(eventData(e))
	})
	switch {
	case err != nil && !streaming:
		c.writeError(ctx, w, err)
	case err != nil:
		if ctx.Err() == nil { // a client that went away reads nothing more
			_ = send.Data(chatErrorBody(ctx, c.log, err))
		}
	default:
		_ = send.Data(chatBody(resp))
	}
}

// eventData is the wire data of a stream event; its type names the event.
func eventData(e chat.Event) any {
	switch e.Kind {
	case chat.EventToolCall:
		return ToolCallEvent{ID: e.Call.ID, Name: e.Call.Name, Arguments: e.Call.Arguments}
	case chat.EventToolResult:
		return ToolResultEvent{ID: e.Call.ID, Name: e.Call.Name, OK: e.OK, Content: e.Content}
	case chat.EventApprovalRequired:
		return ApprovalRequiredEvent{ApprovalID: e.ApprovalID, Name: e.Call.Name, Arguments: e.Call.Arguments, ExpiresAt: e.ExpiresAt.UTC()}
	}
	return DeltaEvent{Text: e.Text}
}

// writeError answers err as JSON with its status, replacing the event
// stream's content type that nothing has been written under yet.
func (c *chatAPI) writeError(ctx context.Context, w http.ResponseWriter, err error) {
	body := chatErrorBody(ctx, c.log, err)
	base.SetFailureHeaders(w, err, body.Status)
	base.WriteJSON(w, body.Status, body)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
