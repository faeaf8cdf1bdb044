package analytics

import (
	"crypto/sha256"
	"encoding/hex"
	"iter"
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
	return nil
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
