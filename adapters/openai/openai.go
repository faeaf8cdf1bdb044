// Package openai is the agent mode's chat model on any OpenAI-compatible
// chat-completions API, through github.com/openai/openai-go. The endpoint,
// model, temperature, token limit and time-out come with each request
// (from the CAT's configuration, so a config change applies at once); the
// API key comes from Options.APIKey (catsrv takes it from the environment,
// never from configuration files; this package reads no environment).
package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

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

func (m *Model) service(req chat.ModelRequest) (sdk.ChatCompletionService, error) {
	if req.BaseURL == "" {
		return sdk.ChatCompletionService{}, errs.New(errs.KindUnavailable, "agent mode has no model endpoint configured (cat.agent.base_url)")
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(m.o.HTTPClient),
		option.WithBaseURL(req.BaseURL),
		option.WithMaxRetries(m.o.MaxRetries),
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
			p.Messages = append(p.Messages, sdk.AssistantMessage(msg.Content))
		default:
			p.Messages = append(p.Messages, sdk.UserMessage(msg.Content))
		}
	}
	return p
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
	svc, err := m.service(req)
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
	c := chat.Completion{Text: res.Choices[0].Message.Content, Model: res.Model}
	if res.Usage.TotalTokens > 0 {
		n := int(res.Usage.TotalTokens)
		c.TokensUsed = &n
	}
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
	svc, err := m.service(req)
	if err != nil {
		return chat.Completion{}, err
	}
	callCtx, cancel := withTimeout(ctx, req)
	defer cancel()
	stream := svc.NewStreaming(callCtx, params(req))
	defer stream.Close() //nolint:errcheck // closing a read body; the stream's own error is what counts
	var text strings.Builder
	c := chat.Completion{}
	for stream.Next() {
		chunk := stream.Current()
		if chunk.Model != "" {
			c.Model = chunk.Model
		}
		if chunk.Usage.TotalTokens > 0 {
			n := int(chunk.Usage.TotalTokens)
			c.TokensUsed = &n
		}
		if len(chunk.Choices) == 0 || chunk.Choices[0].Delta.Content == "" {
			continue
		}
		d := chunk.Choices[0].Delta.Content
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
	return c, nil
}

// classify turns a call's failure into the error the service reports:
// the caller's own cancellation stays as it is; the time-out and upstream
// failures become errs.KindUnavailable, marked for the HTTP layer (504,
// 502). The upstream's text stays in the cause, out of client messages.
func classify(ctx context.Context, req chat.ModelRequest, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errs.Wrap(errs.KindUnavailable, fmt.Errorf("%w: %w", chat.ErrUpstreamTimeout, err),
			fmt.Sprintf("the model service did not answer within %s", req.Timeout.Round(time.Millisecond)))
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
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
