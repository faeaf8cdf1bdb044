package chat

import (
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// ModelRequest is one call of a chat model. The endpoint and parameters
// travel with each call, so a configuration change applies to the next
// request without rebuilding adapters.
type ModelRequest struct {
	Cat string
	// ConversationID names the conversation the call answers in, for
	// tracing (gen_ai.conversation.id); empty when there is none.
	ConversationID string
	BaseURL        string
	Model          string
	Temperature    float64
	MaxTokens      int
	Timeout        time.Duration
	// Messages are the system message, the history and the user message,
	// in order, with the turn's tool calls and results so far.
	Messages []Message
	// Tools are the tools the model may call; none: it must answer.
	Tools []ToolSpec
	// MaxReplyBytes bounds the reply's text (and each tool call's
	// arguments): a longer reply is the upstream's failure
	// (ErrUpstreamFailed), and a stream stops there. 0: no bound.
	MaxReplyBytes int
}

// Completion is what a model answered. On a failed or cancelled stream,
// Text holds what arrived before the failure.
type Completion struct {
	Text       string
	Model      string
	TokensUsed *int
	// InputTokens and OutputTokens are the prompt and completion tokens
	// the service reported (0 when it reported none).
	InputTokens  int64
	OutputTokens int64
	// FinishReason is why the model stopped (stop, length, tool_calls,
	// ...), as the service said; empty when it did not.
	FinishReason string
	// ToolCalls are the tools the model asked to call, in its order.
	ToolCalls []ToolCall
}

// Turn is what one answered (or failed) chat stores, all at once: a new
// conversation if New, the messages to append, and the interaction that
// feeds analytics (nil when there was no reply).
type Turn struct {
	Conversation Conversation
	New          bool
	Messages     []Message
	Interaction  *analytics.Interaction
}
