// Package openaiapi is catsrv's OpenAI-compatible API: GET /v1/models
// lists the CATs as models and POST /v1/chat/completions answers a chat
// turn with one, so Open WebUI, LibreChat and the openai SDKs can talk to
// a CAT. Each call is a turn of the chat service, stored in a
// conversation that X-Conversation-Id names.
package openaiapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/catconfig/overlay"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/chat/service"
	"github.com/catsrv/catsrv/core/errs"
)

// Prefix is the path of the OpenAI-compatible routes, where OpenAI
// clients expect them below their base URL (https://host/v1).
const Prefix = "/v1"

// ConversationHeader names a call's conversation: the response carries
// it, and a request that sends it back continues that conversation.
const ConversationHeader = "X-Conversation-Id"

const tagOpenAI = "openai"

// maxBody bounds a request body: a message of the largest size a CAT may
// allow, JSON-escaped, with a generous history.
const maxBody = 8*catconfig.MaxMaxMessageBytes + 1<<20

// Deps are what the routes need; without Service and Cats they answer 503.
type Deps struct {
	Service *service.Service
	// Cats lists the CATs for /v1/models.
	Cats *overlay.Directory
	// Logger receives the causes of internal errors; nil: slog.Default().
	Logger *slog.Logger
}

type openAI struct {
	d       Deps
	log     *slog.Logger
	started int64
}

var security = []map[string][]string{{base.BearerScheme: {}}}

// Register adds /v1/models and /v1/chat/completions to api.
func Register(api huma.API, d Deps) {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	api.OpenAPI().Tags = append(api.OpenAPI().Tags, &huma.Tag{Name: tagOpenAI,
		Description: "OpenAI-compatible chat: the CATs as models of the chat completions API (base URL /v1)."})
	o := &openAI{d: d, log: log, started: time.Now().Unix()}
	g := huma.NewGroup(api, Prefix)
	g.UseMiddleware(base.WithRequest, base.Authenticate)
	huma.Register(g, o.modelsOp(api), o.models)
	op := o.completionsOp(api)
	body := op.RequestBody
	huma.Register(g, op, o.completions)
	// The handler reads the body itself (RawBody), so huma adds it as
	// required bytes; it is the JSON the handler reads, whose absence is
	// answered in OpenAI's shape.
	body.Required = false
	delete(body.Content, "application/octet-stream")
}

func errorResponses(api huma.API, statuses ...int) map[string]*huma.Response {
	schema := api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[ErrorResponse](), true, "OpenAIError")
	out := map[string]*huma.Response{}
	for _, s := range statuses {
		r := &huma.Response{Description: http.StatusText(s) + " (OpenAI's error shape).",
			Content: map[string]*huma.MediaType{"application/json": {Schema: schema}}}
		if s == http.StatusTooManyRequests || s == http.StatusServiceUnavailable {
			r.Headers = map[string]*huma.Header{"Retry-After": {Description: "Seconds to wait before trying again.", Schema: &huma.Schema{Type: huma.TypeInteger}}}
		}
		out[strconv.Itoa(s)] = r
	}
	return out
}

func (o *openAI) modelsOp(api huma.API) huma.Operation {
	op := huma.Operation{
		OperationID: "listOpenAIModels", Method: http.MethodGet, Path: "/models",
		Summary: "List the CATs as OpenAI models", Tags: []string{tagOpenAI}, Security: security,
		Description: "The CATs the caller may chat with, as OpenAI's model list: each id is a CAT's name.",
		Responses:   errorResponses(api, http.StatusUnauthorized, http.StatusInternalServerError, http.StatusServiceUnavailable),
	}
	op.Responses["200"] = &huma.Response{Description: "The models.", Content: map[string]*huma.MediaType{"application/json": {
		Schema: api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[ModelList](), true, "OpenAIModelList")}}}
	return op
}

func (o *openAI) completionsOp(api huma.API) huma.Operation {
	reg := api.OpenAPI().Components.Schemas
	op := huma.Operation{
		OperationID: "createOpenAIChatCompletion", Method: http.MethodPost, Path: "/chat/completions",
		Summary: "Chat with a CAT through OpenAI's chat completions API", Tags: []string{tagOpenAI}, Security: security,
		Description: "A chat turn with the CAT named by model, recorded as an interaction and in a conversation " +
			"(X-Conversation-Id: sent back, it continues that conversation). The last user message is the turn's message; " +
			"an agent-mode CAT's model also sees the earlier messages. With stream true the answer is chat.completion.chunk " +
			"Server-Sent Events ending with data: [DONE]; an error after the first chunk comes as a data: {\"error\": ...} event.",
		MaxBodyBytes: maxBody, SkipValidateBody: true, // read by the handler, answered in OpenAI's shape
		// Not required for huma: a missing body is answered in OpenAI's shape.
		RequestBody: &huma.RequestBody{Content: map[string]*huma.MediaType{"application/json": {
			Schema: reg.Schema(reflect.TypeFor[CompletionRequest](), true, "OpenAIChatCompletionRequest")}}},
		Responses: errorResponses(api, http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
			http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout),
	}
	op.Responses["200"] = &huma.Response{
		Description: "The answer: one chat.completion, or with stream true chat.completion.chunk events.",
		Headers:     map[string]*huma.Header{ConversationHeader: {Description: "The conversation of the turn.", Schema: &huma.Schema{Type: huma.TypeString}}},
		Content: map[string]*huma.MediaType{
			"application/json":  {Schema: reg.Schema(reflect.TypeFor[Completion](), true, "OpenAIChatCompletion")},
			"text/event-stream": {Schema: &huma.Schema{Type: huma.TypeString, Description: "Server-Sent Events: data: {chat.completion.chunk} lines, then data: [DONE]."}},
		},
	}
	return op
}

type modelsInput struct{}

func (o *openAI) models(ctx context.Context, _ *modelsInput) (*huma.StreamResponse, error) {
	return &huma.StreamResponse{Body: func(hc huma.Context) {
		_, w := humago.Unwrap(hc)
		if _, err := base.CallerOf(ctx); err != nil {
			o.fail(ctx, w, err, "")
			return
		}
		if o.d.Cats == nil {
			o.fail(ctx, w, errs.New(errs.KindUnavailable, "chat is not configured on this server"), "")
			return
		}
		cats, err := o.d.Cats.Cats(ctx)
		if err != nil {
			o.fail(ctx, w, err, "")
			return
		}
		list := ModelList{Object: "list", Data: make([]ModelEntry, 0, len(cats))}
		for _, c := range cats {
			list.Data = append(list.Data, ModelEntry{ID: c.Name, Object: "model", Created: o.started, OwnedBy: "catsrv"})
		}
		writeJSON(w, http.StatusOK, list)
	}}, nil
}

type completionsInput struct {
	ConversationID string `header:"X-Conversation-Id" doc:"Continue this conversation (the header of an earlier answer); without it a new one starts."`
	RawBody        []byte
}

func (o *openAI) completions(ctx context.Context, in *completionsInput) (*huma.StreamResponse, error) {
	return &huma.StreamResponse{Body: func(hc huma.Context) {
		_, w := humago.Unwrap(hc)
		o.complete(ctx, w, in)
	}}, nil
}

// complete answers one chat completion request.
func (o *openAI) complete(ctx context.Context, w http.ResponseWriter, in *completionsInput) {
	claims, err := base.CallerOf(ctx)
	if err != nil {
		o.fail(ctx, w, err, "")
		return
	}
	if o.d.Service == nil {
		o.fail(ctx, w, errs.New(errs.KindUnavailable, "chat is not configured on this server"), "")
		return
	}
	var body CompletionRequest
	if err := json.Unmarshal(in.RawBody, &body); err != nil {
		o.fail(ctx, w, errs.New(errs.KindInvalid, "the body is not a chat completion request: %v", err), "")
		return
	}
	if body.Model == "" || !catconfig.ValidName(body.Model) {
		o.fail(ctx, w, errs.New(errs.KindInvalid, "model: must name a CAT (GET /v1/models lists them)"), "model")
		return
	}
	message, history, err := turn(body.Messages)
	if err != nil {
		o.fail(ctx, w, err, "messages")
		return
	}
	req := chat.Request{Cat: body.Model, UserID: claims.Subject, Message: message, History: history, ConversationID: in.ConversationID}
	if req.ConversationID == "" {
		req.NewConversationID = newID()
	}
	conv := req.ConversationID + req.NewConversationID
	id, created := "chatcmpl-"+newID(), time.Now().Unix()
	if !body.Stream {
		resp, err := o.d.Service.Chat(ctx, req, service.ByMode)
		if err != nil {
			o.fail(ctx, w, err, "")
			return
		}
		w.Header().Set(ConversationHeader, resp.ConversationID)
		writeJSON(w, http.StatusOK, Completion{
			ID: id, Object: "chat.completion", Created: created, Model: body.Model,
			Choices:         []CompletionChoice{{Message: ChoiceMessage{Role: chat.RoleAssistant, Content: resp.Message}, FinishReason: "stop"}},
			CompletionUsage: usage(resp.TokensUsed), Sources: sources(resp.Sources),
		})
		return
	}
	s := &stream{w: w, chunk: Chunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: body.Model}, conv: conv}
	resp, err := o.d.Service.Stream(ctx, req, service.ByMode, func(e chat.Event) error {
		if e.Kind != chat.EventDelta || e.Text == "" {
			return nil // tool calls and approvals have no place in OpenAI's chunks
		}
		return s.send([]ChunkChoice{{Delta: ChunkDelta{Content: e.Text}}}, nil, nil)
	})
	switch {
	case err != nil && !s.started:
		o.fail(ctx, w, err, "")
		return
	case err != nil:
		if ctx.Err() == nil {
			_, detail := o.errorOf(ctx, err, "")
			_ = s.data(ErrorResponse{Error: detail})
		}
		return
	}
	stop := "stop"
	if s.send([]ChunkChoice{{FinishReason: &stop}}, nil, sources(resp.Sources)) != nil {
		return
	}
	if body.StreamOptions != nil && body.StreamOptions.IncludeUsage {
		u := usage(resp.TokensUsed)
		if s.send([]ChunkChoice{}, &u, nil) != nil {
			return
		}
	}
	_ = s.write([]byte("data: [DONE]\n\n"))
}

// stream writes chunk events, starting the response at the first.
type stream struct {
	w       http.ResponseWriter
	chunk   Chunk
	conv    string
	started bool
}

func (s *stream) send(choices []ChunkChoice, u *CompletionUsage, src []CompletionSource) error {
	c := s.chunk
	c.Choices, c.CompletionUsage, c.Sources = choices, u, src
	if !s.started && len(choices) > 0 && choices[0].FinishReason == nil {
		c.Choices[0].Delta.Role = chat.RoleAssistant
	}
	return s.data(c)
}

func (s *stream) data(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.write(fmt.Appendf(nil, "data: %s\n\n", b))
}

func (s *stream) write(b []byte) error {
	if !s.started {
		s.started = true
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set(ConversationHeader, s.conv)
		s.w.WriteHeader(http.StatusOK)
	}
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return http.NewResponseController(s.w).Flush()
}

// errorOf is err in OpenAI's shape, with the status base's table gives
// its kind; a failed model service is 502, one that timed out 504, one
// that rate-limits 429.
func (o *openAI) errorOf(ctx context.Context, err error, param string) (int, OpenAIErrorDetail) {
	body := base.ErrorBodyFor(ctx, o.log, err, base.OpenAIKinds)
	status, msg := body.Status, body.Message
	if errs.KindOf(err) != errs.KindRateLimited {
		switch {
		case errors.Is(err, chat.ErrUpstreamTimeout):
			status = http.StatusGatewayTimeout
		case errors.Is(err, chat.ErrUpstreamFailed):
			status = http.StatusBadGateway
		}
	}
	d := OpenAIErrorDetail{Message: msg, Type: errorType(status)}
	if param != "" && status == http.StatusBadRequest {
		d.Param = &param
	}
	if status == http.StatusNotFound && errs.KindOf(err) == errs.KindNotFound && param == "" {
		// The service's not found is the CAT (model) or the conversation.
		code := "not_found"
		d.Code = &code
	}
	return status, d
}

func errorType(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	}
	return "server_error"
}

// fail answers err in OpenAI's shape on a response not yet written.
func (o *openAI) fail(ctx context.Context, w http.ResponseWriter, err error, param string) {
	status, d := o.errorOf(ctx, err, param)
	base.SetFailureHeaders(w, err, status)
	if status == http.StatusTooManyRequests && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", strconv.Itoa(base.RetryAfterSeconds))
	}
	writeJSON(w, status, ErrorResponse{Error: d})
}

func writeJSON(w http.ResponseWriter, status int, v any) { base.WriteJSON(w, status, v) }

// newID is a random 128-bit hex id, the form of the service's own.
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
