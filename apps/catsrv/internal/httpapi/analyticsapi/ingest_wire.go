package analyticsapi

import (
	"net/http"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
)

// This file holds the wire shapes of the ingestion route.

// Content types of an ingestion batch.
const (
	contentNDJSON = "application/x-ndjson"
	contentJSON   = "application/json"
)

// ingestInput is the query of POST /interactions; the body is read by the
// ingestBody middleware, streaming, not by huma.
type ingestInput struct {
	Cat string `query:"catname" required:"true" maxLength:"256" doc:"The CAT the interactions belong to; every line's cat must be it (a line may leave cat out)." example:"demo"`
}

// IngestRecord documents one interaction of a batch: the import format of
// catsrv import (docs/api.md), one object a line or an element of the
// array.
type IngestRecord struct {
	Time           string          `json:"time" format:"date-time" doc:"When it happened, RFC 3339."`
	Cat            string          `json:"cat,omitempty" doc:"The CAT; may be left out, it is then catname. Any other value makes the line invalid."`
	EventKind      string          `json:"event_kind" doc:"api for the CAT's own API interactions (the only kind analytics counts); other kinds are stored and not counted."`
	Question       string          `json:"question"`
	Answer         string          `json:"answer"`
	Topic          string          `json:"topic"`
	Model          string          `json:"model"`
	Persona        string          `json:"persona"`
	QuestionID     string          `json:"question_id,omitempty" doc:"Derived from the question text when left out."`
	AnswerID       string          `json:"answer_id,omitempty" doc:"Derived from the answer text when left out."`
	UserID         string          `json:"user_id,omitempty"`
	ConversationID string          `json:"conversation_id,omitempty"`
	InteractionID  string          `json:"interaction_id,omitempty" maxLength:"256" doc:"Names the interaction: the CAT stores one interaction per id, so a retried batch is never counted twice. Without it the line is always stored."`
	InputTokens    int64           `json:"input_tokens,omitempty" minimum:"0" doc:"Tokens the model read; 0 when left out."`
	OutputTokens   int64           `json:"output_tokens,omitempty" minimum:"0" doc:"Tokens the model wrote; 0 when left out."`
	LatencyMS      *float64        `json:"latency_ms,omitempty" minimum:"0" doc:"Time to the whole answer, ms; left out of latency percentiles when absent."`
	FirstTokenMS   *float64        `json:"first_token_ms,omitempty" minimum:"0" doc:"Time to the answer's first token, ms."`
	CostUSD        float64         `json:"cost_usd,omitempty" minimum:"0" doc:"What the answer cost, US dollars; when absent (or 0), computed from cat.pricing.<model> at write time."`
	Feedback       *IngestFeedback `json:"feedback,omitempty"`
}

// IngestFeedback documents the feedback of an ingested interaction.
type IngestFeedback struct {
	Rating  string `json:"rating" enum:"up,down"`
	Reason  string `json:"reason,omitempty" maxLength:"100" doc:"A short reason (one of the CAT's feedback reasons)."`
	Comment string `json:"comment,omitempty" maxLength:"2000" doc:"Free text, up to 2000 characters."`
}

// IngestBody is what a stored batch answers.
type IngestBody struct {
	Lines         int `json:"lines" doc:"Interactions in the batch."`
	Stored        int `json:"stored" doc:"Interactions this request stored."`
	AlreadyStored int `json:"already_stored" doc:"Interactions not stored because the CAT already had their interaction_id (from an earlier batch, a concurrent retry, or earlier in this batch)."`
}

// ingestErrors are the error responses of the ingestion route.
var ingestErrors = map[int]base.ErrorDoc{
	http.StatusBadRequest:   {Description: "The body could not be read to its end (the client stopped sending); nothing was stored.", Shape: base.PlainError},
	http.StatusUnauthorized: {Description: "The request has no valid bearer token.", Shape: base.PlainError},
	http.StatusForbidden: {Description: "The token may not ingest into this CAT: neither an admin's nor an ingest token naming it.",
		Shape: base.PlainError},
	http.StatusNotFound: {Description: "The CAT is not configured.", Shape: base.PlainError},
	http.StatusRequestEntityTooLarge: {Description: "The batch is larger than the server accepts (CATSRV_INGEST_MAX_BYTES bytes, " +
		"CATSRV_INGEST_MAX_LINES interactions); nothing was stored. Send it in smaller batches.", Shape: base.PlainError},
	http.StatusUnsupportedMediaType: {Description: "The Content-Type is neither application/x-ndjson nor application/json.", Shape: base.PlainError},
	http.StatusUnprocessableEntity: {Description: "catname is missing, or lines of the batch are invalid: nothing was stored. " +
		"Each entry's loc is [\"body\", line, field] (line: 1-based line of the JSON Lines body, counting blank lines, " +
		"or element of the array; field when the problem is one field's), at most 20 lines, then one entry [\"body\"] " +
		"saying how many more.", Shape: base.InvalidRequest},
	http.StatusInternalServerError: {Description: "The server failed; the cause is logged, not shown.", Shape: base.PlainError},
	http.StatusServiceUnavailable: {Description: "The database is unreachable or busy for now; nothing was stored. " +
		"Try again after Retry-After seconds: interactions with an interaction_id are never stored twice.", Shape: base.PlainError},
}
