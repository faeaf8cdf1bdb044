package ports

//go:generate go tool moq -rm -pkg mocks -out mocks/chat_moq.go . ChatModel ConversationStore ConversationPruner ConversationEraser TurnRecorder KnowledgeSource

import (
	"context"
	"time"

	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/chat/legacy"
)

// ChatModel is a chat-completions model service (the agent mode).
type ChatModel interface {
	// Complete answers the request in one piece.
	Complete(ctx context.Context, req chat.ModelRequest) (chat.Completion, error)
	// Stream answers the request, calling onDelta with each chunk of text
	// as it arrives; a model that cannot stream calls it once with the
	// whole reply. It returns the whole completion; on failure or
	// cancellation, the completion holds the text received so far with
	// the error. An error of onDelta stops the stream and is returned.
	//
	// Errors: errs.KindUnavailable, marked chat.ErrUpstreamFailed or
	// chat.ErrUpstreamTimeout when the service failed or was too slow.
	Stream(ctx context.Context, req chat.ModelRequest, onDelta func(delta string) error) (chat.Completion, error)
}

// ConversationStore keeps users' conversations. Every method is scoped by
// owner: a conversation of another owner is errs.KindNotFound, exactly as
// one that does not exist.
type ConversationStore interface {
	// Conversation returns the conversation and its messages in the order
	// appended.
	Conversation(ctx context.Context, owner chat.Owner, id string) (chat.Conversation, []chat.Message, error)
	// Conversations lists the owner's conversations as chat.ListPage does.
	Conversations(ctx context.Context, owner chat.Owner, page chat.Page) (chat.ConversationPage, error)
	// RenameConversation sets the name and UpdatedAt and returns the
	// conversation; searches see the new name at once.
	RenameConversation(ctx context.Context, owner chat.Owner, id, name string, at time.Time) (chat.Conversation, error)
	// DeleteConversation removes the conversation and its messages.
	DeleteConversation(ctx context.Context, owner chat.Owner, id string) error
	// SearchConversations returns at most limit of the owner's
	// conversations whose name and messages together contain every term
	// of the query (chat.SearchTerms), best first, each with a snippet of
	// the text that matched. The search is full-text and indexed in
	// durable stores; stores may also match stems of the terms.
	SearchConversations(ctx context.Context, owner chat.Owner, query string, limit int) ([]chat.SearchHit, error)
}

// ConversationEraser finds and deletes every conversation of a user,
// whatever the CAT: the conversation part of exporting and erasing a
// person.
type ConversationEraser interface {
	// ConversationCats returns the CATs in which the user has
	// conversations, by name (configured now or not), so that an export
	// can list them through ConversationStore, CAT by CAT.
	ConversationCats(ctx context.Context, userID string) ([]string, error)
	// DeleteConversationsOf deletes the user's conversations in every
	// CAT, with their messages and their search index entries, and
	// returns how many; deleting none is no error. It does not touch the
	// interactions the turns recorded (ports.InteractionEraser does).
	DeleteConversationsOf(ctx context.Context, userID string) (int, error)
}

// ConversationPruner deletes a CAT's conversations whose last activity
// is older than a time: chat retention (chat.retention_days). Kept apart
// from ConversationStore, whose methods act for one owner.
type ConversationPruner interface {
	// PruneConversations deletes the CAT's conversations whose UpdatedAt
	// is before `before`, with their messages (searches no longer find
	// them), at most batch per transaction (batch <= 0: a store default),
	// until none is left or ctx ends, and returns how many. It leaves the
	// interactions of their turns to analytics retention.
	PruneConversations(ctx context.Context, cat string, before time.Time, batch int) (int, error)
}

// TurnRecorder stores a chat turn atomically: the conversation (created if
// turn.New, as given), its new messages in order (UpdatedAt moves to the
// last message's time) and the interaction, all or nothing, the
// interaction through the same log analytics reads, so it is counted as
// soon as RecordTurn returns. For an existing conversation only its ID and
// Owner are read. Messages keep the IDs given; one given without an ID
// gets one from the store (stable, unique, not of the hex form the chat
// service makes); an ID chat.CheckMessageIDs refuses is errs.KindInvalid. A turn for an unknown or foreign conversation is
// errs.KindNotFound; a new one whose id exists, errs.KindConflict; an
// invalid interaction (analytics.Interaction.Validate), errs.KindInvalid.
//
// Durable stores index the name and the text of all messages of a
// conversation as one document, since a search hit needs every term
// somewhere in the conversation (SearchConversations).
type TurnRecorder interface {
	RecordTurn(ctx context.Context, turn chat.Turn) error
}

// KnowledgeSource gives the legacy pipeline a CAT's knowledge base
// (question/answer pairs and intents).
type KnowledgeSource interface {
	// Knowledge loads the knowledge base at path (cat.legacy.knowledge_base;
	// empty: an empty base). A missing or malformed file is
	// errs.KindUnavailable naming the file.
	Knowledge(ctx context.Context, path string) (*legacy.Knowledge, error)
}

// TokenUsage tells the agent's token budgets (cat.budget.*) what was used.
type TokenUsage interface {
	// TokensSince returns the input and output tokens, summed, of the
	// CAT's counted interactions (analytics.Interaction.Counted) at or
	// after since; of one user's only when userID is not empty.
	TokensSince(ctx context.Context, cat, userID string, since time.Time) (int64, error)
}
