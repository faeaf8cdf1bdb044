// Package openai is the agent mode's chat model on any OpenAI-compatible
// chat-completions API, through github.com/openai/openai-go. The endpoint,
// model, temperature, token limit and time-out come with each request
// (from the CAT's configuration, so a config change applies at once); the
// API key comes from Options.APIKey (catsrv takes it from the environment,
// never from configuration files; this package reads no environment).
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

var _ ports.ChatModel = (*Model)(nil)

// Options configure the adapter.
type Options struct {
	// APIKey returns the key for a CAT; "" sends none (local servers).
	// catsrv passes config.Config.AgentKey (CATSRV_AGENT_API_KEY).
	APIKey func(cat string) string
	// HTTPClient makes the calls; http.DefaultClient when nil.
	HTTPClient *http.Client
	// MaxRetries on rate limits and server errors; 0 fails at once, so a
	// request's time-out bounds the whole call.
	MaxRetries int
	// NoStreaming makes Stream call Complete and deliver the reply as one
	// delta, for servers that cannot stream.
	NoStreaming bool
}

// Model calls the chat-completions API. Safe for concurrent use.
type Model struct{ o Options }

// New returns the model adapter.
func New(o Options) *Model {
	if o.APIKey == nil {
		o.APIKey = func(string) string { return "" }
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	return &Model{o: o}
}

func (m *Model) service(req chat.ModelRequest, stream *limitedBody) (sdk.ChatCompletionService, error) {
	if req.BaseURL == "" {
		return sdk.ChatCompletionService{}, errs.New(errs.KindUnavailable, "agent mode has no model endpoint configured (cat.agent.base_url)")
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(m.o.HTTPClient),
		option.WithBaseURL(req.BaseURL),
		option.WithMaxRetries(m.o.MaxRetries),
		option.WithMiddleware(bounded(req, stream)),
	}
	if key := m.o.APIKey(req.Cat); key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	return sdk.NewChatCompletionService(opts...), nil
}

func params(req chat.ModelRequest) sdk.ChatCompletionNewParams {
	p := sdk.ChatCompletionNewParams{
		Model:       req.Model,
		Temperature: sdk.Float(req.Temperature),
	}
	if req.MaxTokens > 0 {
		// max_tokens rather than max_completion_tokens: every
		// OpenAI-compatible server understands it.
		p.MaxTokens = sdk.Int(int64(req.MaxTokens))
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case chat.RoleSystem:
			p.Messages = append(p.Messages, sdk.SystemMessage(msg.Content))
		case chat.RoleAssistant:
			p.Messages = append(p.Messages, assistantMessage(msg))
		case chat.RoleTool:
			p.Messages = append(p.Messages, sdk.ToolMessage(msg.Content, msg.ToolCallID))
		default:
			p.Messages = append(p.Messages, sdk.UserMessage(msg.Content))
		}
	}
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: toolParameters(t.Parameters)}
		if t.Description != "" {
			fn.Description = sdk.String(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(fn))
	}
	return p
}

// assistantMessage is an assistant message with its tool calls, in the
// chat-completions shape. Arguments that are not JSON go back as {}: some
// servers parse them when they render the conversation.
func assistantMessage(msg chat.Message) sdk.ChatCompletionMessageParamUnion {
	if len(msg.ToolCalls) == 0 {
		return sdk.AssistantMessage(msg.Content)
	}
	var a sdk.ChatCompletionAssistantMessageParam
	if msg.Content != "" {
		a.Content.OfString = sdk.String(msg.Content)
	}
	for _, c := range msg.ToolCalls {
		args := c.Arguments
		if !json.Valid([]byte(args)) {
			args = "{}"
		}
		a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
				ID: c.ID, Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args},
			},
		})
	}
	return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// toolParameters is a tool's JSON Schema as the SDK takes it; a missing
// or unreadable schema is an object without properties.
func toolParameters(schema []byte) shared.FunctionParameters {
	var p shared.FunctionParameters
	if len(schema) == 0 || json.Unmarshal(schema, &p) != nil || p == nil {
		p = shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
	}
	return p
}

// errReplyTooLarge marks a reply longer than the request allows.
var errReplyTooLarge = errors.New("the model's reply is too large")

// errNotEventStream marks a streamed answer that is not an event stream.
var errNotEventStream = errors.New("the model service answered a stream request without an event stream")

// errStreamCut marks a stream that ended before the model said it had
// finished (no finish_reason): a connection cut mid-reply.
var errStreamCut = errors.New("the model's stream ended before the reply was finished")

// rawLimit bounds the bytes read of one answer: the reply's own bound,
// with room for JSON escaping and the chunks' framing (an endless stream
// stops there even if it carries no text).
func rawLimit(req chat.ModelRequest) int64 {
	if req.MaxReplyBytes <= 0 {
		return 1 << 40
	}
	return 16*int64(req.MaxReplyBytes) + 1<<20
}

// bounded is the middleware that reads an answer within rawLimit. For a
// stream (stream not nil: the body it reads through) it refuses an answer
// with anything but text/event-stream.
func bounded(req chat.ModelRequest, stream *limitedBody) option.Middleware {
	limit := rawLimit(req)
	return func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(r)
		if err != nil || res == nil {
			return res, err
		}
		body := &limitedBody{}
		if stream != nil {
			body = stream
			if res.StatusCode == http.StatusOK {
				if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "text/event-stream" {
					_ = res.Body.Close()
					return nil, fmt.Errorf("%w (Content-Type %q)", errNotEventStream, res.Header.Get("Content-Type"))
				}
			}
		}
		body.rc, body.left = res.Body, limit
		res.Body = body
		return res, nil
	}
}

// limitedBody fails with errReplyTooLarge once more than left bytes are
// read, and notes whether the stream's end mark (data: [DONE]) went by.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
	tail []byte // the last bytes read, to find the mark across reads
	done bool
}

var doneMark = []byte("data: [DONE]")

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// At the bound: an answer of exactly that size ends here; one
		// more byte is too much.
		var one [1]byte
		if n, err := b.rc.Read(one[:]); n == 0 && err != nil {
			return 0, err
		}
		return 0, errReplyTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if !b.done && n > 0 {
		seen := append(b.tail, p[:n]...)
		b.done = bytes.Contains(seen, doneMark)
		b.tail = append(b.tail[:0], seen[max(0, len(seen)-len(doneMark)):]...)
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// tooLarge is the failure of a reply over the request's bound.
func tooLarge(req chat.ModelRequest) error {
	return errs.Wrap(errs.KindUnavailable, fmt.Errorf("%w: %w", chat.ErrUpstreamFailed, errReplyTooLarge),
		fmt.Sprintf("the model's reply is longer than %d bytes", req.MaxReplyBytes))
}

// overLimit reports whether the reply's text or a call's arguments pass
// the request's bound.
func overLimit(req chat.ModelRequest, text string, calls []chat.ToolCall) bool {
	if req.MaxReplyBytes <= 0 {
		return false
	}
	if len(text) > req.MaxReplyBytes {
		return true
	}
	for _, c := range calls {
		if len(c.Arguments) > req.MaxReplyBytes || len(c.Name) > req.MaxReplyBytes {
			return true
		}
	}
	return false
}

func toolCalls(calls []sdk.ChatCompletionMessageToolCallUnion) []chat.ToolCall {
	var out []chat.ToolCall
	for _, c := range calls {
		out = append(out, chat.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	return out
}

// withTimeout bounds the call by the request's time-out.
func withTimeout(ctx context.Context, req chat.ModelRequest) (context.Context, context.CancelFunc) {
	if req.Timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, req.Timeout)
}

// Complete asks for the whole reply at once.
func (m *Model) Complete(ctx context.Context, req chat.ModelRequest) (chat.Completion, error) {
	svc, err := m.service(req, nil)
	if err != nil {
		return chat.Completion{}, err
	}
	callCtx, cancel := withTimeout(ctx, req)
	defer cancel()
	res, err := svc.New(callCtx, params(req))
	if err != nil {
		return chat.Completion{}, classify(ctx, req, err)
	}
	if len(res.Choices) == 0 {
		return chat.Completion{}, errs.Wrap(errs.KindUnavailable, chat.ErrUpstreamFailed, "the model service returned no answer")
	}
	c := chat.Completion{Text: res.Choices[0].Message.Content, Model: res.Model, ToolCalls: toolCalls(res.Choices[0].Message.ToolCalls)}
	if overLimit(req, c.Text, c.ToolCalls) {
		return chat.Completion{}, tooLarge(req)
	}
	c.FinishReason = res.Choices[0].FinishReason
	usage(&c, res.Usage)
	return c, nil
}

// Stream asks for the reply as server-sent events and hands each content
// chunk to onDelta.
func (m *Model) Stream(ctx context.Context, req chat.ModelRequest, onDelta func(string) error) (chat.Completion, error) {
	if m.o.NoStreaming {
		c, err := m.Complete(ctx, req)
		if err != nil {
			return c, err
		}
		return c, onDelta(c.Text)
	}
	body := &limitedBody{}
	svc, err := m.service(req, body)
	if err != nil {
		return chat.Completion{}, err
	}
	callCtx, cancel := withTimeout(ctx, req)
	defer cancel()
	p := params(req)
	p.StreamOptions.IncludeUsage = sdk.Bool(true)
	stream := svc.NewStreaming(callCtx, p)
	defer stream.Close() //nolint:errcheck // closing a read body; the stream's own error is what counts
	// The accumulator joins tool calls split across chunks (by index).
	var acc sdk.ChatCompletionAccumulator
	var text strings.Builder
	c := chat.Completion{}
	finished := false
	for stream.Next() {
		chunk := stream.Current()
		acc.AddChunk(chunk)
		if chunk.Model != "" {
			c.Model = chunk.Model
		}
		// The usage comes in a last chunk without choices, because
		// stream_options.include_usage asks for it.
		usage(&c, chunk.Usage)
		if len(chunk.Choices) == 0 {
			continue
		}
		if r := chunk.Choices[0].FinishReason; r != "" {
			finished = true
			c.FinishReason = r
		}
		d := chunk.Choices[0].Delta.Content
		if d == "" {
			continue
		}
		if req.MaxReplyBytes > 0 && text.Len()+len(d) > req.MaxReplyBytes {
			// What was sent stays what is stored: the piece over the
			// bound is not delivered.
			c.Text = text.String()
			return c, tooLarge(req)
		}
		text.WriteString(d)
		if err := onDelta(d); err != nil {
			c.Text = text.String()
			return c, err
		}
	}
	c.Text = text.String()
	if err := stream.Err(); err != nil {
		return c, classify(ctx, req, err)
	}
	if len(acc.Choices) > 0 {
		c.ToolCalls = toolCalls(acc.Choices[0].Message.ToolCalls)
		if acc.Choices[0].FinishReason != "" {
			finished = true
		}
	}
	if overLimit(req, "", c.ToolCalls) {
		return c, tooLarge(req)
	}
	if !finished && !body.done {
		return c, errs.Wrap(errs.KindUnavailable, fmt.Errorf("%w: %w", chat.ErrUpstreamFailed, errStreamCut), "the model's stream ended before the reply was finished")
	}
	return c, nil
}

// usage sets the completion's token counts from what the service
// reported; a report of nothing (all zero) leaves them as they are.
func usage(c *chat.Completion, u sdk.CompletionUsage) {
	if u.TotalTokens > 0 {
		n := int(u.TotalTokens)
		c.TokensUsed = &n
	}
	if u.PromptTokens > 0 || u.CompletionTokens > 0 {
		c.InputTokens, c.OutputTokens = u.PromptTokens, u.CompletionTokens
	}
}

// classify turns a call's failure into the error the service reports:
// the caller's own cancellation stays as it is; the time-out and upstream
// failures become errs.KindUnavailable, marked for the HTTP layer (504,
// 502). The upstream's text stays in the cause, out of client messages.
func classify(ctx context.Context, req chat.ModelRequest, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, errReplyTooLarge) {
		return tooLarge(req)
	}
	if errors.Is(err, errNotEventStream) {
		return errs.Wrap(errs.KindUnavailable, fmt.Errorf("%w: %w", chat.ErrUpstreamFailed, err), "the model service did not answer with an event stream")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errs.Wrap(errs.KindUnavailable, fmt.Errorf("%w: %w", chat.ErrUpstreamTimeout, err),
			fmt.Sprintf("the model service did not answer within %s", req.Timeout.Round(time.Millisecond)))
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		// A rate-limited model is errs.KindRateLimited, so an edge that
		// passes rate limits on (the OpenAI routes' 429) can tell it.
		if apiErr.StatusCode == http.StatusTooManyRequests {
			return errs.Wrap(errs.KindRateLimited, fmt.Errorf("%w: %w", chat.ErrUpstreamFailed, err), statusMessage(apiErr.StatusCode))
		}
		return errs.Wrap(errs.KindUnavailable, fmt.Errorf("%w: %w", chat.ErrUpstreamFailed, err), statusMessage(apiErr.StatusCode))
	}
	return errs.Wrap(errs.KindUnavailable, fmt.Errorf("%w: %w", chat.ErrUpstreamFailed, err), "the model service is unreachable")
}

func statusMessage(status int) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Sprintf("the model service refused the credentials (HTTP %d)", status)
	case status == http.StatusNotFound:
		return "the model service does not know the model or path (HTTP 404)"
	case status == http.StatusTooManyRequests:
		return "the model service is rate limiting (HTTP 429)"
	case status >= 500:
		return fmt.Sprintf("the model service failed (HTTP %d)", status)
	}
	return fmt.Sprintf("the model service rejected the request (HTTP %d)", status)
}
