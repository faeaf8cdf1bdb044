package chat

import (
	"cmp"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/catsrv/catsrv/core/errs"
)

// Page sizes of conversation lists and searches.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Page asks for the conversations after a cursor (empty: from the newest).
type Page struct {
	After string
	Limit int
}

// Limited returns the page's limit, DefaultLimit when unset, or an
// errs.KindInvalid error when out of 1..MaxLimit.
func Limited(limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultLimit, nil
	case limit < 0 || limit > MaxLimit:
		return 0, errs.New(errs.KindInvalid, "limit: %d is not between 1 and %d", limit, MaxLimit)
	}
	return limit, nil
}

// ConversationPage is one page of a user's conversations, newest first.
// Next, when set, is the cursor of the page that follows.
type ConversationPage struct {
	Conversations []Conversation
	Next          string
}

// Cursor is a position in the newest-first order: the (UpdatedAt, ID) of
// the last conversation of a page.
type Cursor struct {
	UpdatedAt time.Time
	ID        string
}

// CursorOf returns the cursor just after c.
func CursorOf(c Conversation) string {
	raw := strconv.FormatInt(c.UpdatedAt.UnixNano(), 10) + ":" + c.ID
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// ParseCursor reads a cursor CursorOf made; anything else, including a
// cursor whose id CheckID refuses, is errs.KindInvalid.
func ParseCursor(s string) (Cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, errs.New(errs.KindInvalid, "cursor: not a cursor of this service")
	}
	nanos, id, ok := strings.Cut(string(raw), ":")
	n, err := strconv.ParseInt(nanos, 10, 64)
	if !ok || err != nil || id == "" || CheckID(id) != nil {
		return Cursor{}, errs.New(errs.KindInvalid, "cursor: not a cursor of this service")
	}
	return Cursor{UpdatedAt: time.Unix(0, n).UTC(), ID: id}, nil
}

// Before reports whether c comes after the cursor in the newest-first
// order (UpdatedAt descending, then ID descending).
func (cur Cursor) Before(c Conversation) bool {
	if !c.UpdatedAt.Equal(cur.UpdatedAt) {
		return c.UpdatedAt.Before(cur.UpdatedAt)
	}
	return c.ID < cur.ID
}

// NewestFirst orders conversations as every list does: UpdatedAt
// descending, ties by ID descending.
func NewestFirst(a, b Conversation) int {
	if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
		return c
	}
	return cmp.Compare(b.ID, a.ID)
}

// ListPage is the reference listing every ConversationStore must agree
// with: the owner's conversations of all, newest first, after the page's
// cursor, at most its limit.
func ListPage(all []Conversation, owner Owner, page Page) (ConversationPage, error) {
	limit, err := Limited(page.Limit)
	if err != nil {
		return ConversationPage{}, err
	}
	var after *Cursor
	if page.After != "" {
		c, err := ParseCursor(page.After)
		if err != nil {
			return ConversationPage{}, err
		}
		after = &c
	}
	var mine []Conversation
	for _, c := range all {
		if c.Owner == owner && (after == nil || after.Before(c)) {
			mine = append(mine, c)
		}
	}
	slices.SortFunc(mine, NewestFirst)
	out := ConversationPage{Conversations: mine[:min(limit, len(mine))]}
	if len(mine) > limit {
		out.Next = CursorOf(out.Conversations[limit-1])
	}
	return out, nil
}
