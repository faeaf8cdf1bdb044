package analytics

import (
	"crypto/sha256"
	"encoding/hex"
	"iter"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/catsrv/catsrv/core/errs"
)

// EventKindAPI is the event kind of the service's own API interactions, the
// only kind that analytics counts. Other kinds are stored and ignored.
const EventKindAPI = "api"

// MaxFieldBytes bounds every text field of an interaction, so a hostile log
// line cannot blow up storage or responses.
const MaxFieldBytes = 64 << 10

// MaxInteractionIDBytes bounds an interaction id: it is a key every store
// indexes (unique per CAT), not text.
const MaxInteractionIDBytes = 256

// Interaction is one logged exchange between a user and a CAT.
type Interaction struct {
	Time           time.Time
	Cat            string
	EventKind      string
	Question       string
	Answer         string
	Topic          string
	Model          string
	Persona        string
	QuestionID     string
	AnswerID       string
	UserID         string
	ConversationID string
	// InteractionID, when set, names the interaction for idempotent
	// ingestion: a log stores at most one interaction per (Cat,
	// InteractionID), so a retried batch never counts twice. Empty: no
	// name, never deduplicated.
	InteractionID string
	// Usage is what producing the answer took: tokens, time and money.
	Usage Usage
	// Feedback is the asker's rating of the answer; zero when none.
	Feedback Feedback
}

// Usage is what one answer took. Tokens and cost are 0 when not counted;
// LatencyMS and FirstTokenMS are nil when not measured, and such
// interactions are left out of latency percentiles only.
type Usage struct {
	InputTokens  int64
	OutputTokens int64
	// CostUSD is given by the writer or, when absent, computed from the
	// CAT's pricing for its model at write time (Pricing.Cost).
	CostUSD      float64
	LatencyMS    *float64
	FirstTokenMS *float64
}

// Feedback ratings.
const (
	RatingUp   = "up"
	RatingDown = "down"
)

// MaxFeedbackCommentChars bounds a feedback comment, in characters.
const MaxFeedbackCommentChars = 2000

// MaxFeedbackReasonChars bounds a feedback reason, in characters: a
// reason is a short label (one of the CAT's cat.feedback.reasons).
const MaxFeedbackReasonChars = 100

// MaxTokens bounds a token count: beyond 2^53 a count no longer survives
// a JSON number.
const MaxTokens = 1 << 53

// IsZero reports whether the feedback is empty (no rating).
func (f Feedback) IsZero() bool { return f == Feedback{} }

// Validate checks a feedback: a rating of up or down (or everything
// empty), a reason and a comment within their bounds, as storable text.
func (f Feedback) Validate() error {
	if f.IsZero() {
		return nil
	}
	if f.Rating != RatingUp && f.Rating != RatingDown {
		return errs.New(errs.KindInvalid, "field feedback.rating: %q is not up or down", clipText(f.Rating))
	}
	if err := CheckText("feedback.reason", f.Reason); err != nil {
		return err
	}
	if err := CheckText("feedback.comment", f.Comment); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(f.Reason); n > MaxFeedbackReasonChars {
		return errs.New(errs.KindInvalid, "field feedback.reason is longer than %d characters", MaxFeedbackReasonChars)
	}
	if n := utf8.RuneCountInString(f.Comment); n > MaxFeedbackCommentChars {
		return errs.New(errs.KindInvalid, "field feedback.comment is longer than %d characters", MaxFeedbackCommentChars)
	}
	return nil
}

// Validate checks a usage: token counts between 0 and MaxTokens, times
// and cost finite and not negative.
func (u Usage) Validate() error {
	for _, f := range [...]struct {
		name string
		n    int64
	}{{"input_tokens", u.InputTokens}, {"output_tokens", u.OutputTokens}} {
		if f.n < 0 || f.n > MaxTokens {
			return errs.New(errs.KindInvalid, "field %s: %d is not between 0 and %d", f.name, f.n, int64(MaxTokens))
		}
	}
	if !nonNegative(u.CostUSD) {
		return errs.New(errs.KindInvalid, "field cost_usd: %v is not a number >= 0", u.CostUSD)
	}
	for _, f := range [...]struct {
		name string
		v    *float64
	}{{"latency_ms", u.LatencyMS}, {"first_token_ms", u.FirstTokenMS}} {
		if f.v != nil && !nonNegative(*f.v) {
			return errs.New(errs.KindInvalid, "field %s: %v is not a number >= 0", f.name, *f.v)
		}
	}
	return nil
}

// nonNegative reports whether v is a finite number >= 0.
func nonNegative(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }

// Equal reports whether two usages are equal, their times by value.
func (u Usage) Equal(o Usage) bool {
	return u.InputTokens == o.InputTokens && u.OutputTokens == o.OutputTokens && u.CostUSD == o.CostUSD &&
		sameMS(u.LatencyMS, o.LatencyMS) && sameMS(u.FirstTokenMS, o.FirstTokenMS)
}

func sameMS(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// MS returns a pointer to a time in milliseconds, for Usage.
func MS(v float64) *float64 { return &v }

// Equal reports whether two interactions are equal: every field, the
// times as instants and the usage by value (Usage.Equal).
func (i Interaction) Equal(o Interaction) bool {
	if !i.Time.Equal(o.Time) || !i.Usage.Equal(o.Usage) {
		return false
	}
	i.Time, o.Time = time.Time{}, time.Time{}
	i.Usage, o.Usage = Usage{}, Usage{}
	return i == o
}

func clipText(s string) string {
	if len(s) > 40 {
		return strings.ToValidUTF8(s[:40], "") + "..."
	}
	return s
}

// Feedback is a person's rating of an answer. Rating is RatingUp,
// RatingDown or empty (no feedback); Reason is one of the CAT's
// cat.feedback.reasons or empty.
type Feedback struct {
	Rating  string
	Reason  string
	Comment string
}

// Counted reports whether analytics counts the interaction.
func (i Interaction) Counted() bool { return i.EventKind == EventKindAPI }

// Normalize puts the time in UTC and fills missing question and answer ids
// with ids derived from the text, so the same text gets the same id on every
// back end and across restarts.
func (i Interaction) Normalize() Interaction {
	i.Time = i.Time.UTC()
	if i.QuestionID == "" {
		i.QuestionID = DeriveQuestionID(i.Question)
	}
	if i.AnswerID == "" {
		i.AnswerID = DeriveAnswerID(i.Answer)
	}
	// A store keeps its own copy of the times, not the writer's.
	if p := i.Usage.LatencyMS; p != nil {
		i.Usage.LatencyMS = MS(*p)
	}
	if p := i.Usage.FirstTokenMS; p != nil {
		i.Usage.FirstTokenMS = MS(*p)
	}
	return i
}

// DeriveQuestionID returns the stable id of a question text: "q-" and the
// first 16 hex digits of the text's SHA-256.
func DeriveQuestionID(text string) string { return deriveID("q-", text) }

// DeriveAnswerID returns the stable id of an answer text: "a-" and the first
// 16 hex digits of the text's SHA-256.
func DeriveAnswerID(text string) string { return deriveID("a-", text) }

func deriveID(prefix, text string) string {
	sum := sha256.Sum256([]byte(text))
	return prefix + hex.EncodeToString(sum[:8])
}

// Validate checks that the interaction has every required field, valid UTF-8
// without NUL bytes, and no field longer than MaxFieldBytes. It names the
// first problem it finds.
func (i Interaction) Validate() error {
	if i.Time.IsZero() {
		return errs.New(errs.KindInvalid, "missing field: time")
	}
	required := []struct{ name, value string }{
		{"cat", i.Cat}, {"event_kind", i.EventKind}, {"question", i.Question},
		{"answer", i.Answer}, {"topic", i.Topic}, {"model", i.Model}, {"persona", i.Persona},
	}
	for _, f := range required {
		if strings.TrimSpace(f.value) == "" {
			return errs.New(errs.KindInvalid, "missing field: %s", f.name)
		}
	}
	all := append(required, []struct{ name, value string }{
		{"question_id", i.QuestionID}, {"answer_id", i.AnswerID},
		{"user_id", i.UserID}, {"conversation_id", i.ConversationID},
		{"interaction_id", i.InteractionID},
	}...)
	for _, f := range all {
		if err := CheckText(f.name, f.value); err != nil {
			return err
		}
	}
	if len(i.InteractionID) > MaxInteractionIDBytes {
		return errs.New(errs.KindInvalid, "field interaction_id is longer than %d bytes", MaxInteractionIDBytes)
	}
	if err := i.Usage.Validate(); err != nil {
		return err
	}
	return i.Feedback.Validate()
}

// CheckText rejects text that no back end can store faithfully: invalid
// UTF-8, NUL bytes (PostgreSQL refuses them) and values over MaxFieldBytes.
func CheckText(name, value string) error {
	switch {
	case len(value) > MaxFieldBytes:
		return errs.New(errs.KindInvalid, "field %s is longer than %d bytes", name, MaxFieldBytes)
	case !utf8.ValidString(value):
		return errs.New(errs.KindInvalid, "field %s is not valid UTF-8", name)
	case strings.IndexByte(value, 0) >= 0:
		return errs.New(errs.KindInvalid, "field %s contains a NUL byte", name)
	}
	return nil
}

// DedupeKey is what an interaction id is unique by: its CAT and id. ok is
// false for an interaction without an id, which is never deduplicated.
func (i Interaction) DedupeKey() (key [2]string, ok bool) {
	return [2]string{i.Cat, i.InteractionID}, i.InteractionID != ""
}

// Each yields the interactions of a slice, for InteractionLog.Append.
func Each(interactions []Interaction) iter.Seq2[Interaction, error] {
	return func(yield func(Interaction, error) bool) {
		for _, i := range interactions {
			if !yield(i, nil) {
				return
			}
		}
	}
}
