// Package chatlog is the chat-log view of the analytics model: the
// interactions behind a selection, newest first, read page by page with an
// opaque cursor, and their daily counts. It holds the types the
// InteractionBrowser port speaks and the reference implementation every
// adapter must agree with.
package chatlog

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// MaxPageSize bounds one page, so that a single request cannot ask a store
// for the whole log at once.
const MaxPageSize = 1000

// Entry is one interaction of a listing with its storage sequence number,
// which breaks ties between interactions of the same time.
type Entry struct {
	analytics.Interaction
	Seq int64
}

// Position is where an entry sits in the listing order: time descending,
// then sequence number descending. The zero Position is before the first
// entry.
type Position struct {
	Time time.Time
	Seq  int64
}

// IsZero reports whether the position is the start of the listing.
func (p Position) IsZero() bool { return p.Time.IsZero() && p.Seq == 0 }

// PositionOf returns the position of an entry.
func PositionOf(e Entry) Position { return Position{Time: e.Time, Seq: e.Seq} }

// After reports whether an entry at q comes after p in the listing order.
// Every entry comes after the zero position.
func (p Position) After(q Position) bool {
	if p.IsZero() {
		return true
	}
	if !q.Time.Equal(p.Time) {
		return q.Time.Before(p.Time)
	}
	return q.Seq < p.Seq
}

// Page asks for up to Limit entries after a position, of the review
// queue Review names when it is set.
type Page struct {
	After  Position
	Limit  int
	Review Review
}

// Review kinds: the answers rated down, and the questions the CAT did not
// answer.
const (
	ReviewDown       = "down"
	ReviewUnanswered = "unanswered"
)

// Review restricts a listing to a review queue: Kind ReviewDown keeps the
// interactions rated down, ReviewUnanswered those whose answer is exactly
// DefaultAnswer (the CAT's cat.legacy.default_answer, what it says when
// no stage knows the answer). The zero Review keeps every entry.
type Review struct {
	Kind          string
	DefaultAnswer string
}

// Selects reports whether the review queue holds the interaction.
func (r Review) Selects(i analytics.Interaction) bool {
	switch r.Kind {
	case ReviewDown:
		return i.Feedback.Rating == analytics.RatingDown
	case ReviewUnanswered:
		return i.Answer == r.DefaultAnswer
	}
	return true
}

// Check validates the page size.
func (p Page) Check() error {
	if p.Limit < 1 || p.Limit > MaxPageSize {
		return errs.New(errs.KindInvalid, "page size must be between 1 and %d", MaxPageSize)
	}
	return nil
}

// Listing is one page of entries and, when more follow, the position to
// continue after.
type Listing struct {
	Entries []Entry
	// Next is the position of the last entry when more entries follow,
	// else zero.
	Next Position
}

// DayCount is how many interactions of a selection fall on one UTC day.
type DayCount struct {
	// Day is the UTC midnight that starts the day.
	Day   time.Time
	Count int64
}

// cursorSep separates the time from the sequence number in a cursor.
const cursorSep = "|"

// EncodeCursor turns a position into the opaque cursor clients pass back.
// The time keeps every digit, so a cursor is exact on any back end.
func EncodeCursor(p Position) string {
	if p.IsZero() {
		return ""
	}
	raw := p.Time.UTC().Format(time.RFC3339Nano) + cursorSep + strconv.FormatInt(p.Seq, 10)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// DecodeCursor is the inverse of EncodeCursor; the empty cursor is the
// start. A cursor this package did not make is errs.KindInvalid.
func DecodeCursor(cursor string) (Position, error) {
	if cursor == "" {
		return Position{}, nil
	}
	invalid := errs.New(errs.KindInvalid, "invalid cursor")
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return Position{}, invalid
	}
	at, seq, ok := strings.Cut(string(raw), cursorSep)
	if !ok {
		return Position{}, invalid
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return Position{}, invalid
	}
	n, err := strconv.ParseInt(seq, 10, 64)
	if err != nil || n < 0 {
		return Position{}, invalid
	}
	return Position{Time: t.UTC(), Seq: n}, nil
}

// Compare orders entries as listings do: newest first, then by descending
// sequence number.
func Compare(a, b Entry) int {
	if c := b.Time.Compare(a.Time); c != 0 {
		return c
	}
	switch {
	case a.Seq > b.Seq:
		return -1
	case a.Seq < b.Seq:
		return 1
	}
	return 0
}

// List is the reference listing: the entries of the selection after the
// page's position, in listing order, at most page.Limit of them.
// Entries must be normalized and carry distinct sequence numbers.
func List(entries []Entry, sel analytics.Selection, page Page) Listing {
	var matched []Entry
	for _, e := range entries {
		if sel.Matches(e.Interaction) && page.Review.Selects(e.Interaction) && page.After.After(PositionOf(e)) {
			matched = append(matched, e)
		}
	}
	slices.SortFunc(matched, Compare)
	if len(matched) <= page.Limit {
		return Listing{Entries: matched}
	}
	matched = matched[:page.Limit]
	return Listing{Entries: matched, Next: PositionOf(matched[len(matched)-1])}
}

// Daily is the reference daily series: the selection's interactions
// counted per UTC day, days without any left out, oldest first.
func Daily(interactions []analytics.Interaction, sel analytics.Selection) []DayCount {
	counts := map[time.Time]int64{}
	for _, i := range interactions {
		if sel.Matches(i) {
			counts[DayOf(i.Time)]++
		}
	}
	out := make([]DayCount, 0, len(counts))
	for d, n := range counts {
		out = append(out, DayCount{Day: d, Count: n})
	}
	slices.SortFunc(out, func(a, b DayCount) int { return a.Day.Compare(b.Day) })
	return out
}

// DayOf returns the UTC midnight starting t's day.
func DayOf(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}
