package porttest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// failAfter is how many valid interactions a failing Append yields before
// it fails: enough that a batching adapter has written several batches
// that must be undone.
const failAfter = 5000

// valid yields n valid interactions with many distinct rollup rows.
func valid(n int, yield func(analytics.Interaction, error) bool) bool {
	for k := range n {
		i := event(day(k%30).Add(time.Duration(k)*time.Second), "bulk", "model-a", "student",
			fmt.Sprintf("bulk question %d", k), fmt.Sprintf("bulk answer %d", k%97))
		if k%2 == 1 {
			i.Cat = catBeta
		}
		if !yield(i, nil) {
			return false
		}
	}
	return true
}

func testAllOrNothingOnSequenceError(t *testing.T, h *harness) {
	h.append(mixedLog()...)
	broken := errors.New("read error on line 5001")
	_, err := h.appendFailing(t.Context(), func(yield func(analytics.Interaction, error) bool) {
		if valid(failAfter, yield) {
			yield(analytics.Interaction{}, broken)
		}
	})
	if !errors.Is(err, broken) {
		t.Errorf("Append error = %v, want the sequence's error", err)
	}
	// The store still works after the failure.
	h.append(mixedLog()[:2]...)
	h.expect(analytics.Selection{Cat: catAlpha})
}

func testAllOrNothingOnInvalid(t *testing.T, h *harness) {
	h.append(mixedLog()...)
	good := event(day(1), "account", "model-a", "student", "Q?", "A.")
	cases := []struct {
		name  string
		spoil func(i *analytics.Interaction)
	}{
		{"MissingTime", func(i *analytics.Interaction) { i.Time = time.Time{} }},
		{"MissingCat", func(i *analytics.Interaction) { i.Cat = "" }},
		{"MissingEventKind", func(i *analytics.Interaction) { i.EventKind = "" }},
		{"BlankTopic", func(i *analytics.Interaction) { i.Topic = " \t" }},
		{"MissingQuestion", func(i *analytics.Interaction) { i.Question = "" }},
		{"NULInAnswer", func(i *analytics.Interaction) { i.Answer = "a\x00b" }},
		{"InvalidUTF8InModel", func(i *analytics.Interaction) { i.Model = "m\xff" }},
		{"OversizedPersona", func(i *analytics.Interaction) { i.Persona = strings.Repeat("p", analytics.MaxFieldBytes+1) }},
		{"NULInQuestionID", func(i *analytics.Interaction) { i.QuestionID = "q\x00" }},
	}
	for k, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := h.in(t)
			bad := good
			c.spoil(&bad)
			count := 1500
			if k == 0 {
				count = failAfter
			}
			_, err := h.appendFailing(t.Context(), func(yield func(analytics.Interaction, error) bool) {
				if valid(count, yield) {
					yield(bad, nil)
				}
			})
			if errs.KindOf(err) != errs.KindInvalid {
				t.Errorf("Append error = %v (kind %v), want kind invalid", err, errs.KindOf(err))
			}
		})
	}
	t.Run("InvalidFirst", func(t *testing.T) {
		h := h.in(t)
		bad := good
		bad.Topic = ""
		_, err := h.appendFailing(t.Context(), analytics.Each([]analytics.Interaction{bad, good}))
		if errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("Append error = %v (kind %v), want kind invalid", err, errs.KindOf(err))
		}
	})
}

func testAllOrNothingOnCancel(t *testing.T, h *harness) {
	h.append(mixedLog()...)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, err := h.appendFailing(ctx, func(yield func(analytics.Interaction, error) bool) {
		if valid(1500, yield) {
			cancel()
			valid(10, yield)
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Append error = %v, want context.Canceled", err)
	}
}
