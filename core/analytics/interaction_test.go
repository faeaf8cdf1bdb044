package analytics_test

import (
	"math"
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
		{"usage", func(i *analytics.Interaction) {
			i.Usage = analytics.Usage{InputTokens: 10, OutputTokens: 0, CostUSD: 0.1, LatencyMS: analytics.MS(0), FirstTokenMS: analytics.MS(3.5)}
		}, ""},
		{"negative tokens", func(i *analytics.Interaction) { i.Usage.OutputTokens = -1 }, "field output_tokens: -1 is not between 0"},
		{"too many tokens", func(i *analytics.Interaction) { i.Usage.InputTokens = analytics.MaxTokens + 1 }, "field input_tokens"},
		{"negative latency", func(i *analytics.Interaction) { i.Usage.LatencyMS = analytics.MS(-0.5) }, "field latency_ms: -0.5 is not a number >= 0"},
		{"NaN first token", func(i *analytics.Interaction) { i.Usage.FirstTokenMS = analytics.MS(math.NaN()) }, "field first_token_ms"},
		{"infinite cost", func(i *analytics.Interaction) { i.Usage.CostUSD = math.Inf(1) }, "field cost_usd"},
		{"negative cost", func(i *analytics.Interaction) { i.Usage.CostUSD = -1 }, "field cost_usd"},
		{"feedback", func(i *analytics.Interaction) {
			i.Feedback = analytics.Feedback{Rating: "down", Reason: "wrong", Comment: strings.Repeat("é", analytics.MaxFeedbackCommentChars)}
		}, ""},
		{"other rating", func(i *analytics.Interaction) { i.Feedback.Rating = "meh" }, `field feedback.rating: "meh" is not up or down`},
		{"reason without rating", func(i *analytics.Interaction) { i.Feedback.Reason = "wrong" }, "field feedback.rating"},
		{"long comment", func(i *analytics.Interaction) {
			i.Feedback = analytics.Feedback{Rating: "up", Comment: strings.Repeat("é", analytics.MaxFeedbackCommentChars+1)}
		}, "field feedback.comment is longer than 2000 characters"},
		{"long reason", func(i *analytics.Interaction) {
			i.Feedback = analytics.Feedback{Rating: "up", Reason: strings.Repeat("r", analytics.MaxFeedbackReasonChars+1)}
		}, "field feedback.reason is longer"},
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

func TestCost(t *testing.T) {
	p := analytics.Price{InputPerMTok: 3, OutputPerMTok: 15}
	if got := p.Cost(2_000_000, 100_000); got != 7.5 {
		t.Fatalf("cost = %v, want 7.5", got)
	}
	u := analytics.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}
	if got := u.WithCost(p).CostUSD; got != 18 {
		t.Fatalf("computed cost = %v, want 18", got)
	}
	u.CostUSD = 0.5
	if got := u.WithCost(p).CostUSD; got != 0.5 {
		t.Fatalf("given cost replaced: %v", got)
	}
}
