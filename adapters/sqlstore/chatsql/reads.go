package chatsql

import (
	"context"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/ports"
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

// CatOverridesSince returns the documents saved above a version
// (catOverridesSince).
func (s *Store) CatOverridesSince(ctx context.Context, since int64) ([]ports.CatOverride, error) {
	return sqlstore.Retry(ctx, func(ctx context.Context) ([]ports.CatOverride, error) { return s.catOverridesSince(ctx, since) })
}

// SaveCatOverride replaces the CAT's document if its version is still
// expected (saveCatOverride). Retried when the connection is lost: a save
// that did commit then answers a conflict, and the caller merges again.
func (s *Store) SaveCatOverride(ctx context.Context, cat string, expected int64, doc []byte) (int64, error) {
	return sqlstore.Retry(ctx, func(ctx context.Context) (int64, error) { return s.saveCatOverride(ctx, cat, expected, doc) })
}
