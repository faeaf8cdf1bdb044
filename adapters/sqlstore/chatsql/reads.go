package chatsql

import (
	"context"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/chat"
)

// The port methods safe to run again, each retried as a whole
// (sqlstore.Retry) when its connection is lost: the reads, and the writes
// whose repetition changes nothing (a rename to the same name, a
// document replaced by the same). A turn retries in its transaction
// (sqlstore.Store.WriteTx); a delete is not retried (its repetition would
// answer not found).

// Conversation returns the owner's conversation and its messages in the
// order appended (conversation).
func (s *Store) Conversation(ctx context.Context, owner chat.Owner, id string) (chat.Conversation, []chat.Message, error) {
	type result struct {
		c        chat.Conversation
		messages []chat.Message
	}
	r, err := sqlstore.Retry(ctx, func(ctx context.Context) (result, error) {
		c, messages, err := s.conversation(ctx, owner, id)
		return result{c, messages}, err
	})
	return r.c, r.messages, err
}

// Conversations lists the owner's conversations, as chat.ListPage does
// (conversations).
func (s *Store) Conversations(ctx context.Context, owner chat.Owner, page chat.Page) (chat.ConversationPage, error) {
	return sqlstore.Retry(ctx, func(ctx context.Context) (chat.ConversationPage, error) {
		return s.conversations(ctx, owner, page)
	})
}

// SearchConversations returns the owner's conversations that hold every
// term of the query, best first (searchConversations).
func (s *Store) SearchConversations(ctx context.Context, owner chat.Owner, query string, limit int) ([]chat.SearchHit, error) {
	return sqlstore.Retry(ctx, func(ctx context.Context) ([]chat.SearchHit, error) {
		return s.searchConversations(ctx, owner, query, limit)
	})
}

// RenameConversation sets the owner's conversation's name and UpdatedAt
// (renameConversation).
func (s *Store) RenameConversation(ctx context.Context, owner chat.Owner, id, name string, at time.Time) (chat.Conversation, error) {
	return sqlstore.Retry(ctx, func(ctx context.Context) (chat.Conversation, error) {
		return s.renameConversation(ctx, owner, id, name, at)
	})
}

// CatOverrides returns the stored runtime configuration document of every
// CAT that has one (catOverrides).
func (s *Store) CatOverrides(ctx context.Context) (map[string][]byte, error) {
	return sqlstore.Retry(ctx, s.catOverrides)
}

// SaveCatOverride replaces the CAT's document (saveCatOverride).
func (s *Store) SaveCatOverride(ctx context.Context, cat string, doc []byte) error {
	return sqlstore.RetryErr(ctx, func(ctx context.Context) error { return s.saveCatOverride(ctx, cat, doc) })
}
