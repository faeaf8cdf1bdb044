// Package chat is the chat domain: requests and replies of /chat (spec
// §2.2, §2.3), conversations and their messages (§2.4), the rules every
// conversation store follows (naming, paging, search), and the text
// helpers the legacy pipeline and the router share. It holds no I/O: the
// use case is core/chat/service, stores and models are ports.
package chat

import (
	"errors"
	"time"
)

// Roles of a message, as chat-completions APIs name them.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Request is one chat message as the service receives it, with the caller
// already authenticated.
type Request struct {
	Cat    string
	UserID string
	// Message is the user's text; it must be non-empty and at most the
	// CAT's cat.max_message_bytes.
	Message string
	// ConversationID continues a conversation of the user; empty starts one.
	ConversationID string
	// NewConversationID is the id a conversation started by this request
	// takes (empty: the service makes one). A caller that must name the
	// conversation before the reply ends (a stream's headers) sets it.
	NewConversationID string
	// History is context the client sent with the message (an OpenAI
	// client's earlier messages): the agent model sees it after the stored
	// conversation, before the message; it is not stored. Other modes
	// route the message alone.
	History []Message
	// Context is the request's free-form context; "topic" and "persona"
	// feed the interaction, other fields only custom routing rules.
	Context map[string]any
	// Model overrides the CAT's agent model.
	Model string
	// PersonaPreference is the user's memory preference "persona", read by
	// the caller; it names the persona when the context does not.
	PersonaPreference string
}

// Source kinds: a chunk of an uploaded document, or a knowledge-base entry.
const (
	SourceDocument = "document"
	SourceKB       = "kb"
)

// Source is what a reply drew on: a knowledge-base entry (Kind SourceKB,
// Question set) or a chunk of a CAT's document (Kind SourceDocument).
type Source struct {
	Kind     string
	ID       string
	Question string
	Title    string
	ChunkID  string
	Snippet  string
	Score    float64
	URL      string
}

// Response is the reply of /chat (spec §2.3).
type Response struct {
	Message        string
	ConversationID string
	Model          string
	TokensUsed     *int
	Sources        []Source
}

// Conversation is a user's conversation with one CAT.
type Conversation struct {
	ID        string
	Owner     Owner
	Name      string
	CreatedAt time.Time
	// UpdatedAt is the time of the last message or rename; lists are
	// ordered by it, newest first.
	UpdatedAt time.Time
}

// Owner scopes conversations: a conversation is visible only to the user
// who started it, through the CAT it was started with.
type Owner struct {
	Cat    string
	UserID string
}

// Message is one message of a conversation.
type Message struct {
	// ID names the message, unique and stable: the service makes one for
	// every message of a turn (random, 128 bits in hex) and stores keep
	// it as given; a store names a message given without one (stable,
	// and never in the service's hex form). An answer's interaction is
	// named by it (analytics.Interaction.InteractionID), so feedback on
	// the message reaches the interaction.
	ID      string
	Role    string
	Content string
	// Model names what answered an assistant message; empty for users.
	Model string
	Time  time.Time
	// ToolCalls are the calls an assistant message asked for (its Content
	// may then be empty).
	ToolCalls []ToolCall
	// ToolCallID, ToolName, Outcome and Duration describe a tool message
	// (Role RoleTool): the call it answers, the tool, how it ended
	// (Outcome*) and how long it took; Content is the result the model saw.
	ToolCallID string
	ToolName   string
	Outcome    string
	Duration   time.Duration
}

// ErrUpstreamFailed and ErrUpstreamTimeout mark (with errors.Is) the
// errs.KindUnavailable errors of a model service that failed or did not
// answer in time, so the HTTP layer can tell 502 and 504 from a model that
// is not configured at all (503).
var (
	ErrUpstreamFailed  = errors.New("upstream model failed")
	ErrUpstreamTimeout = errors.New("upstream model timed out")
)
