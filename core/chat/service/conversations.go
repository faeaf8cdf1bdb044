package service

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

// MaxNameRunes bounds a conversation name set by a rename.
const MaxNameRunes = 200

// Conversation returns one of the owner's conversations with its
// messages; an id chat.CheckID refuses is errs.KindInvalid.
func (s *Service) Conversation(ctx context.Context, owner chat.Owner, id string) (chat.Conversation, []chat.Message, error) {
	if err := chat.CheckID(id); err != nil {
		return chat.Conversation{}, nil, err
	}
	return s.d.Conversations.Conversation(ctx, owner, id)
}

// Conversations lists the owner's conversations, newest first; a bad
// limit or cursor is errs.KindInvalid.
func (s *Service) Conversations(ctx context.Context, owner chat.Owner, page chat.Page) (chat.ConversationPage, error) {
	if _, err := chat.Limited(page.Limit); err != nil {
		return chat.ConversationPage{}, err
	}
	if page.After != "" {
		if _, err := chat.ParseCursor(page.After); err != nil {
			return chat.ConversationPage{}, err
		}
	}
	return s.d.Conversations.Conversations(ctx, owner, page)
}

// Rename sets a conversation's name: trimmed, 1 to MaxNameRunes runes of
// storable text, else errs.KindInvalid (as is an id chat.CheckID refuses).
func (s *Service) Rename(ctx context.Context, owner chat.Owner, id, name string) (chat.Conversation, error) {
	if err := chat.CheckID(id); err != nil {
		return chat.Conversation{}, err
	}
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return chat.Conversation{}, errs.New(errs.KindInvalid, "name: must not be empty")
	case utf8.RuneCountInString(name) > MaxNameRunes:
		return chat.Conversation{}, errs.New(errs.KindInvalid, "name: longer than %d characters", MaxNameRunes)
	}
	if err := analytics.CheckText("name", name); err != nil {
		return chat.Conversation{}, err
	}
	return s.d.Conversations.RenameConversation(ctx, owner, id, name, s.d.Clock.Now())
}

// Delete removes one of the owner's conversations and its messages; an
// id chat.CheckID refuses is errs.KindInvalid.
func (s *Service) Delete(ctx context.Context, owner chat.Owner, id string) error {
	if err := chat.CheckID(id); err != nil {
		return err
	}
	return s.d.Conversations.DeleteConversation(ctx, owner, id)
}

// Search finds the owner's conversations containing every word of q; a
// query without words, too long, or a bad limit is errs.KindInvalid.
func (s *Service) Search(ctx context.Context, owner chat.Owner, q string, limit int) ([]chat.SearchHit, error) {
	if _, err := chat.SearchTerms(q); err != nil {
		return nil, err
	}
	if _, err := chat.Limited(limit); err != nil {
		return nil, err
	}
	return s.d.Conversations.SearchConversations(ctx, owner, q, limit)
}
