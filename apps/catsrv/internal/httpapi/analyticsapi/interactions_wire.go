package analyticsapi

import (
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/core/analytics/chatlog"
)

// This file holds the wire shapes of the chat-log routes.

// The export formats.
const (
	formatCSV   = "csv"
	formatJSONL = "jsonl"
)

// interactionsInput is the input of /interactions.
type interactionsInput struct {
	CommonParams
	FilterParams
	Cursor string `query:"cursor" maxLength:"200" doc:"Continue after the page that returned this next_cursor; absent starts with the newest."`
	Limit  int    `query:"limit" minimum:"1" maximum:"1000" default:"50" doc:"Page size."`
}

// exportInput is the input of /interactions/export.
type exportInput struct {
	CommonParams
	FilterParams
	Format string `query:"format" enum:"csv,jsonl" default:"csv" doc:"csv (a header row, spreadsheet-safe) or jsonl (the import format of catsrv import)."`
	Limit  int    `query:"limit" minimum:"1" maximum:"100000" default:"100000" doc:"Export at most this many interactions, newest first."`
}

// dailyInput is the input of /daily_counts.
type dailyInput struct {
	CommonParams
	FilterParams
}

// InteractionEntry is one logged interaction of the chat log.
type InteractionEntry struct {
	Time           time.Time `json:"time" doc:"When it happened, UTC."`
	Question       string    `json:"question"`
	Answer         string    `json:"answer"`
	Topic          string    `json:"topic"`
	Model          string    `json:"model"`
	Persona        string    `json:"persona"`
	QuestionID     string    `json:"question_id" doc:"As logged, or derived from the text."`
	AnswerID       string    `json:"answer_id" doc:"As logged, or derived from the text."`
	UserID         string    `json:"user_id"`
	ConversationID string    `json:"conversation_id"`
}

// InteractionsBody is what /interactions returns.
type InteractionsBody struct {
	Interactions []InteractionEntry `json:"interactions" nullable:"false" doc:"Newest first."`
	NextCursor   string             `json:"next_cursor" doc:"Pass as cursor for the next page; empty on the last page."`
}

// DayCountEntry is one day of /daily_counts.
type DayCountEntry struct {
	Date  string `json:"date" doc:"UTC day, YYYY-MM-DD."`
	Count int64  `json:"count"`
}

// DailyCountsBody is what /daily_counts returns.
type DailyCountsBody struct {
	DailyCounts []DayCountEntry `json:"daily_counts" nullable:"false" doc:"Oldest first; days without interactions are left out."`
}

// exportOutput streams an export.
type exportOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	TotalCount         int64  `header:"X-Total-Count" doc:"How many interactions the selection has."`
	Truncated          bool   `header:"X-Export-Truncated" doc:"Whether the export stops at limit before the selection's end."`
	Body               func(huma.Context)
}

func entryBody(e chatlog.Entry) InteractionEntry {
	return InteractionEntry{
		Time: e.Time.UTC(), Question: e.Question, Answer: e.Answer, Topic: e.Topic, Model: e.Model, Persona: e.Persona,
		QuestionID: e.QuestionID, AnswerID: e.AnswerID, UserID: e.UserID, ConversationID: e.ConversationID,
	}
}
