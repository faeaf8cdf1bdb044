package analytics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

func validInteraction() analytics.Interaction {
	return analytics.Interaction{
		Time: time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC), Cat: "demo", EventKind: "api",
		Question: "How?", Answer: "Like so.", Topic: "general", Model: "m", Persona: "p",
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*analytics.Interaction)
		wantErr string
	}{
		{"valid", func(*analytics.Interaction) {}, ""},
		{"zero time", func(i *analytics.Interaction) { i.Time = time.Time{} }, "missing field: time"},
		{"no cat", func(i *analytics.Interaction) { i.Cat = "" }, "missing field: cat"},
		{"blank question", func(i *analytics.Interaction) { i.Question = "  " }, "missing field: question"},
		{"no persona", func(i *analytics.Interaction) { i.Persona = "" }, "missing field: persona"},
		{"NUL byte", func(i *analytics.Interaction) { i.Topic = "a\x00b" }, "field topic contains a NUL byte"},
		{"invalid UTF-8", func(i *analytics.Interaction) { i.Answer = "\xff" }, "field answer is not valid UTF-8"},
		{"oversized", func(i *analytics.Interaction) { i.UserID = strings.Repeat("x", analytics.MaxFieldBytes+1) }, "field user_id is longer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := validInteraction()
			tt.mutate(&i)
			err := i.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want prefix %q", err, tt.wantErr)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	i := validInteraction()
	i.Time = time.Date(2024, 1, 1, 12, 0, 0, 0, time.FixedZone("X", 3600))
	n := i.Normalize()
	if n.Time.Location() != time.UTC || !n.Time.Equal(i.Time) {
		t.Fatalf("time not put in UTC: %v", n.Time)
	}
	if n.QuestionID != analytics.DeriveQuestionID("How?") || n.AnswerID != analytics.DeriveAnswerID("Like so.") {
		t.Fatalf("ids not derived: %q %q", n.QuestionID, n.AnswerID)
	}
	i.QuestionID, i.AnswerID = "given-q", "given-a"
	if n := i.Normalize(); n.QuestionID != "given-q" || n.AnswerID != "given-a" {
		t.Fatalf("given ids replaced: %q %q", n.QuestionID, n.AnswerID)
	}
}

func TestDerivedIDs(t *testing.T) {
	if analytics.DeriveQuestionID("a") == analytics.DeriveQuestionID("a ") {
		t.Fatal("different texts share an id")
	}
	if analytics.DeriveQuestionID("a") == analytics.DeriveAnswerID("a") {
		t.Fatal("question and answer ids of one text must differ")
	}
	// Pinned: the id must never change between releases, or stored filters break.
	if got := analytics.DeriveQuestionID("How do I reset my password?"); got != "q-"+sha16("How do I reset my password?") {
		t.Fatalf("derived id changed: %s", got)
	}
}
