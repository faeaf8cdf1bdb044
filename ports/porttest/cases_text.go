package porttest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// literalTexts are values a store must keep and match byte for byte: no
// case folding, trimming, Unicode normalization, LIKE patterns or SQL.
var literalTexts = []string{
	"Café", "Cafe", "café", "CAFÉ", "Café ", " Café", "Cafe\u0301", "Café\u200b",
	"naïve 日本語 🚀", "O'Reilly", `say "hi"`, "'; DROP TABLE interactions; --",
	"%", "_", "a%b", "a_b", "axb", "a\\b", `back\slash\`, "line\nbreak", "tab\there",
	"?", "$1", ":name", "@p1", "{{x}}", "\\x00", "Robert'); DROP TABLE rollup_daily;--",
	strings.Repeat("長", analytics.MaxFieldBytes/len("長")),
}

// literalsRaceEvery: under the race detector, testLiteralTexts filters
// by every literalsRaceEvery-th text only (all are stored and counted).
// Under -short it filters by every text on one dimension, a different one
// for each next text, so every text and every dimension is still matched;
// the full pass filters every text on every dimension.
const literalsRaceEvery = 4

func testLiteralTexts(t *testing.T, h *harness) {
	var log []analytics.Interaction
	for k, v := range literalTexts {
		at := day(0).Add(time.Duration(k) * time.Minute)
		log = append(log,
			event(at, v, "model-a", "student", "plain question", "plain answer"),
			event(at, "account", v, "student", "plain question", "plain answer"),
			event(at, "account", "model-a", v, "plain question", "plain answer"),
			event(at, "account", "model-a", "student", v, v),
			withIDs(event(at, "account", "model-a", "student", "plain question", "plain answer"), v, v),
		)
	}
	h.append(log...)
	h.expect(analytics.Selection{Cat: catAlpha})
	for k, v := range literalTexts {
		if underRace && k%literalsRaceEvery != 0 {
			continue // the breadth runs in the normal pass (see race.go)
		}
		for di, d := range analytics.Dimensions {
			if testing.Short() && (k+di)%len(analytics.Dimensions) != 0 {
				continue
			}
			vals := []string{v}
			if d == analytics.Question {
				vals = append(vals, analytics.DeriveQuestionID(v))
			}
			if d == analytics.Answer {
				vals = append(vals, analytics.DeriveAnswerID(v))
			}
			for n, val := range vals {
				t.Run(fmt.Sprintf("%v/%d/%d", d, k, n), func(t *testing.T) {
					h := h.in(t)
					h.expect(analytics.Selection{Cat: catAlpha, Filters: filterOf(d, val)})
				})
			}
		}
	}
	// The reference itself: each pattern-like value matches only itself.
	for _, v := range []string{"%", "_", "a_b", "Café"} {
		if got := analytics.CountTotal(h.ref, analytics.Selection{Cat: catAlpha, Filters: analytics.Filters{Topics: []string{v}}}); got != 1 {
			t.Errorf("reference total for topic %q = %d, hand count 1", v, got)
		}
	}
	h.expectQuery(analytics.Query{Cat: catAlpha, Filters: analytics.Filters{Topics: []string{"%", "a_b"}, Models: []string{"model-a", "_"}}})
}

func testThousandFilterValues(t *testing.T, h *harness) {
	h.append(mixedLog()...)
	many := func(present ...string) []string {
		out := make([]string, 0, 1000)
		for k := range 1000 - len(present) {
			out = append(out, fmt.Sprintf("absent value %d '%%_", k))
		}
		return append(out, present...)
	}
	cases := []struct {
		name string
		f    analytics.Filters
	}{
		{"Topics", analytics.Filters{Topics: many("account", "billing")}},
		{"Models", analytics.Filters{Models: many("model-c")}},
		{"Personas", analytics.Filters{Personas: many()}},
		{"QuestionIDs", analytics.Filters{QuestionIDs: many(analytics.DeriveQuestionID("Where is my parcel?"))}},
		{"AnswerIDs", analytics.Filters{AnswerIDs: many(analytics.DeriveAnswerID("It ships tomorrow."), analytics.DeriveAnswerID("Yes, within 30 days."))}},
		{"Every", analytics.Filters{
			Topics: many("account", "shipping"), Models: many("model-a"), Personas: many("student"),
			QuestionIDs: many(analytics.DeriveQuestionID("How do I reset my password?"), analytics.DeriveQuestionID("Where is my parcel?")),
			AnswerIDs:   many(analytics.DeriveAnswerID("Use the reset link."), analytics.DeriveAnswerID("It ships tomorrow.")),
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := h.in(t)
			h.expect(analytics.Selection{Cat: catAlpha, Filters: c.f})
			h.expectQuery(analytics.Query{Cat: catAlpha, Filters: c.f})
		})
	}
	if got := analytics.CountTotal(h.ref, analytics.Selection{Cat: catAlpha, Filters: cases[5].f}); got != 2 {
		t.Errorf("reference total with every filter = %d, hand count 2", got)
	}
}

// testUnstorableFilterValues filters by values no interaction can hold:
// they match nothing, while the other values of the same filter still
// match, and the store answers rather than failing.
func testUnstorableFilterValues(t *testing.T, h *harness) {
	h.append(mixedLog()...)
	unstorable := []string{"account\x00", "bad \xff utf-8", strings.Repeat("x", analytics.MaxFieldBytes+1)}
	for k, v := range unstorable {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			h := h.in(t)
			h.expect(analytics.Selection{Cat: catAlpha, Filters: analytics.Filters{Topics: []string{v}}})
			h.expect(analytics.Selection{Cat: catAlpha, Filters: analytics.Filters{Topics: []string{v, "account"}, QuestionIDs: []string{v, analytics.DeriveQuestionID("How do I reset my password?")}}})
			h.expect(analytics.Selection{Cat: catAlpha + v})
		})
	}
}
