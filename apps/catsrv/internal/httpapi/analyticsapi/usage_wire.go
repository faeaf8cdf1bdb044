package analyticsapi

import (
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
)

// This file holds the wire shapes of /usage, /feedback and /review.

// GroupParams group /usage and /feedback.
type GroupParams struct {
	GroupBy string `query:"group_by" enum:"model,persona,topic,day" doc:"Also count per model, persona, topic or UTC day; absent: the total only."`
	Limit   int    `query:"limit" minimum:"1" maximum:"1000" default:"100" doc:"Keep at most this many groups: the largest (ties by key), or for day the newest days, oldest first."`
}

// usageInput is the input of /usage and /feedback.
type usageInput struct {
	CommonParams
	FilterParams
	GroupParams
}

// LatencyBody summarizes latencies; each value is null when no counted
// interaction has a latency.
type LatencyBody struct {
	P50 *float64 `json:"p50" doc:"Median latency, ms: the value of its log-scaled bucket, within 1% of the exact percentile."`
	P90 *float64 `json:"p90" doc:"90th percentile, ms, within 1%."`
	P99 *float64 `json:"p99" doc:"99th percentile, ms, within 1%."`
	Max *float64 `json:"max" doc:"The largest latency, ms: its bucket value, within 1%."`
}

// UsageStatsBody is what a set of interactions took.
type UsageStatsBody struct {
	TotalInteractions int64       `json:"total_interactions"`
	InputTokens       int64       `json:"input_tokens"`
	OutputTokens      int64       `json:"output_tokens"`
	CostUSD           float64     `json:"cost_usd" doc:"Summed in units of 1e-9 US dollars, so every back end sums the same."`
	LatencyMS         LatencyBody `json:"latency_ms"`
}

// UsageGroupBody is one group of /usage.
type UsageGroupBody struct {
	Key string `json:"key" doc:"The model, persona, topic or UTC day (YYYY-MM-DD)."`
	UsageStatsBody
}

// UsageBody is what /usage returns.
type UsageBody struct {
	UsageStatsBody
	Groups []UsageGroupBody `json:"groups" nullable:"false" doc:"Empty without group_by."`
}

// FeedbackGroupBody is one group of /feedback.
type FeedbackGroupBody struct {
	Key          string   `json:"key" doc:"The model, persona, topic or UTC day (YYYY-MM-DD)."`
	Up           int64    `json:"up"`
	Down         int64    `json:"down"`
	Satisfaction *float64 `json:"satisfaction" doc:"up / (up + down); null when both are 0."`
}

// FeedbackBody is what /feedback returns.
type FeedbackBody struct {
	Up           int64               `json:"up"`
	Down         int64               `json:"down"`
	Satisfaction *float64            `json:"satisfaction" doc:"up / (up + down); null when both are 0."`
	Groups       []FeedbackGroupBody `json:"groups" nullable:"false" doc:"The groups with at least one rating; empty without group_by."`
}

// reviewInput is the input of /review.
type reviewInput struct {
	CommonParams
	FilterParams
	Kind   string `query:"kind" required:"true" enum:"down,unanswered" doc:"down: the answers rated down; unanswered: the questions answered with the CAT's default answer (cat.legacy.default_answer)."`
	Cursor string `query:"cursor" maxLength:"200" doc:"Continue after the page that returned this next_cursor; absent starts with the newest."`
	Limit  int    `query:"limit" minimum:"1" maximum:"1000" default:"50" doc:"Page size (ignored with format=jsonl)."`
	Format string `query:"format" enum:"json,jsonl" default:"json" doc:"json: one page; jsonl: the whole queue, newest first, as a dataset in the import format."`
}

// ReviewEntry is one interaction of a review queue.
type ReviewEntry struct {
	Time           time.Time `json:"time" doc:"When it happened, UTC."`
	Question       string    `json:"question"`
	Answer         string    `json:"answer"`
	Model          string    `json:"model"`
	Topic          string    `json:"topic"`
	Rating         string    `json:"rating" doc:"up, down, or empty when not rated."`
	Reason         string    `json:"reason"`
	Comment        string    `json:"comment"`
	ConversationID string    `json:"conversation_id"`
	InteractionID  string    `json:"interaction_id" doc:"The interaction's id: a chat turn's assistant message id."`
}

// ReviewBody is one page of /review.
type ReviewBody struct {
	Entries    []ReviewEntry `json:"entries" nullable:"false" doc:"Newest first."`
	NextCursor string        `json:"next_cursor" doc:"Pass as cursor for the next page; empty on the last page."`
}

func usageStatsBody(s analytics.UsageStats) UsageStatsBody {
	out := UsageStatsBody{TotalInteractions: s.Interactions, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens, CostUSD: s.CostUSD()}
	if l := s.Latency; l.Count > 0 {
		out.LatencyMS = LatencyBody{P50: &l.P50, P90: &l.P90, P99: &l.P99, Max: &l.Max}
	}
	return out
}

func satisfaction(s analytics.UsageStats) *float64 {
	if v, ok := s.Satisfaction(); ok {
		return &v
	}
	return nil
}

func reviewEntry(e chatlog.Entry) ReviewEntry {
	i := e.Interaction
	return ReviewEntry{Time: i.Time, Question: i.Question, Answer: i.Answer, Model: i.Model, Topic: i.Topic,
		Rating: i.Feedback.Rating, Reason: i.Feedback.Reason, Comment: i.Feedback.Comment,
		ConversationID: i.ConversationID, InteractionID: i.InteractionID}
}
