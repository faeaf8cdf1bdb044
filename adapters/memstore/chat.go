package memstore

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

var (
	_ ports.ConversationStore  = (*Conversations)(nil)
	_ ports.TurnRecorder       = (*Conversations)(nil)
	_ ports.ConversationEraser = (*Conversations)(nil)
)

// Conversations keeps conversations in memory and records chat turns,
// writing their interactions to an interaction log. It is the reference
// of the conversation contract suite. Safe for concurrent use.
type Conversations struct {
	mu    sync.Mutex
	log   ports.InteractionLog
	convs map[string]*conversation
	// named counts the messages named here (given without an id).
	named int64
}

type conversation struct {
	c        chat.Conversation
	messages []chat.Message
}

// NewConversations returns an empty store whose turns append their
// interactions to log (a *Store for a fully in-memory setup).
func NewConversations(log ports.InteractionLog) *Conversations {
	return &Conversations{log: log, convs: map[string]*conversation{}}
}

// owned returns the owner's conversation or errs.KindNotFound. Callers
// hold mu.
func (s *Conversations) owned(owner chat.Owner, id string) (*conversation, error) {
	c, ok := s.convs[id]
	if !ok || c.c.Owner != owner {
		return nil, errs.New(errs.KindNotFound, "conversation %q not found", clipID(id))
	}
	return c, nil
}

func clipID(id string) string {
	if len(id) > 64 {
		return id[:64] + "..."
	}
	return id
}

// RecordTurn stores the turn: the interaction is appended to the log while
// the store is locked and before any message is kept, so a failed append
// leaves the conversation as it was.
func (s *Conversations) RecordTurn(ctx context.Context, turn chat.Turn) error {
	if turn.Interaction != nil {
		if err := turn.Interaction.Validate(); err != nil {
			return err
		}
	}
	if err := chat.CheckMessageIDs(turn.Messages); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := turn.Conversation
	var rec *conversation
	if turn.New {
		if c.ID == "" {
			return errs.New(errs.KindInvalid, "a new conversation needs an id")
		}
		if _, exists := s.convs[c.ID]; exists {
			return errs.New(errs.KindConflict, "conversation %q already exists", clipID(c.ID))
		}
		rec = &conversation{c: c}
	} else {
		var err error
		if rec, err = s.owned(c.Owner, c.ID); err != nil {
			return err
		}
	}
	if turn.Interaction != nil {
		if _, err := s.log.Append(ctx, analytics.Each([]analytics.Interaction{*turn.Interaction})); err != nil {
			return err
		}
	}
	for _, m := range turn.Messages {
		if m.ID == "" {
			s.named++
			m.ID = "m" + strconv.FormatInt(s.named, 10)
		}
		rec.messages = append(rec.messages, m)
		if m.Time.After(rec.c.UpdatedAt) {
			rec.c.UpdatedAt = m.Time
		}
	}
	s.convs[c.ID] = rec
	return nil
}

// Conversation returns the owner's conversation and its messages.
func (s *Conversations) Conversation(_ context.Context, owner chat.Owner, id string) (chat.Conversation, []chat.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.owned(owner, id)
	if err != nil {
		return chat.Conversation{}, nil, err
	}
	return c.c, slices.Clone(c.messages), nil
}

// Conversations lists with the reference chat.ListPage.
func (s *Conversations) Conversations(_ context.Context, owner chat.Owner, page chat.Page) (chat.ConversationPage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := make([]chat.Conversation, 0, len(s.convs))
	for _, c := range s.convs {
		all = append(all, c.c)
	}
	return chat.ListPage(all, owner, page)
}

// RenameConversation renames the owner's conversation.
func (s *Conversations) RenameConversation(_ context.Context, owner chat.Owner, id, name string, at time.Time) (chat.Conversation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.owned(owner, id)
	if err != nil {
		return chat.Conversation{}, err
	}
	c.c.Name, c.c.UpdatedAt = name, at
	return c.c, nil
}

// DeleteConversation removes the owner's conversation and its messages.
func (s *Conversations) DeleteConversation(_ context.Context, owner chat.Owner, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.owned(owner, id); err != nil {
		return err
	}
	delete(s.convs, id)
	return nil
}

// ConversationCats returns the CATs of the user's conversations, by name.
func (s *Conversations) ConversationCats(_ context.Context, userID string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cats := []string{}
	for _, c := range s.convs {
		if c.c.Owner.UserID == userID && !slices.Contains(cats, c.c.Owner.Cat) {
			cats = append(cats, c.c.Owner.Cat)
		}
	}
	slices.Sort(cats)
	return cats, nil
}

// DeleteConversationsOf removes every conversation of the user, in every
// CAT.
func (s *Conversations) DeleteConversationsOf(_ context.Context, userID string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, c := range s.convs {
		if c.c.Owner.UserID == userID {
			delete(s.convs, id)
			n++
		}
	}
	return n, nil
}

// SearchConversations scans every conversation of the owner: a hit has
// all the terms as words of its name or messages; it scores one per
// occurrence in a message and two in the name; the snippet comes from the
// text with the most distinct terms. Fine for memory; durable stores index.
func (s *Conversations) SearchConversations(_ context.Context, owner chat.Owner, query string, limit int) ([]chat.SearchHit, error) {
	terms, err := chat.SearchTerms(query)
	if err != nil {
		return nil, err
	}
	if limit, err = chat.Limited(limit); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var hits []chat.SearchHit
	for _, c := range s.convs {
		if c.c.Owner != owner {
			continue
		}
		if hit, ok := searchOne(c, terms); ok {
			hits = append(hits, hit)
		}
	}
	slices.SortFunc(hits, func(a, b chat.SearchHit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return chat.NewestFirst(a.Conversation, b.Conversation)
	})
	return hits[:min(limit, len(hits))], nil
}

func searchOne(c *conversation, terms []string) (chat.SearchHit, bool) {
	texts := []string{c.c.Name}
	for _, m := range c.messages {
		texts = append(texts, chat.SearchText(m))
	}
	found := map[string]bool{}
	score, best, bestDistinct := 0.0, "", 0
	for i, text := range texts {
		weight := 1.0
		if i == 0 {
			weight = 2
		}
		distinct := 0
		words := chat.Tokens(text)
		for _, t := range terms {
			n := countOf(words, t)
			if n > 0 {
				found[t] = true
				distinct++
			}
			score += weight * float64(n)
		}
		if distinct > bestDistinct {
			best, bestDistinct = text, distinct
		}
	}
	if len(found) < len(uniq(terms)) {
		return chat.SearchHit{}, false
	}
	return chat.SearchHit{Conversation: c.c, Snippet: chat.Snippet(best, terms), Score: score}, true
}

func countOf(words []string, term string) int {
	n := 0
	for _, w := range words {
		if w == term {
			n++
		}
	}
	return n
}

func uniq(terms []string) map[string]bool {
	out := map[string]bool{}
	for _, t := range terms {
		out[strings.ToLower(t)] = true
	}
	return out
}
