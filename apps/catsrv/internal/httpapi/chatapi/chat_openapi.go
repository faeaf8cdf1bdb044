package chatapi

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
)

// security: every /api/v1/cat route needs a token (browsers may send
// the session cookie instead, which the document does not model).
var security = []map[string][]string{{base.BearerScheme: {}}}

// chatErrors say when an /api/v1/cat route answers each error, and with
// which body: base.ErrorBody as chatErrorBody writes it, except that a 422
// may also be huma's ValidationError.
var chatErrors = map[int]base.ErrorDoc{
	http.StatusUnauthorized: {Description: "No valid token (bearer or session cookie), or a revoked one.", Shape: base.PlainError},
	http.StatusForbidden: {Description: "A session cookie on a state-changing request from an origin not allowed (CSRF), " +
		"or a configuration route called without role admin.", Shape: base.PlainError},
	http.StatusNotFound: {Description: "The CAT is not configured, or the conversation (or approval) does not exist or is not the caller's.", Shape: base.PlainError},
	http.StatusConflict: {Description: "The approval was decided already, or its time-out passed (the call counted as denied).", Shape: base.PlainError},
	http.StatusUnprocessableEntity: {Description: "The request breaks a rule (empty or oversized message, bad name, query, limit or cursor, " +
		"a configuration value out of range): ErrorBody VALIDATION_ERROR, whose message names the field. " +
		"A parameter or body that breaks the schema: ValidationError, listing each problem.", Shape: base.EitherError},
	http.StatusTooManyRequests: {Description: "An agent turn past the CAT's monthly token budget (cat.budget.monthly_tokens) or the caller's daily one " +
		"(cat.budget.user_daily_tokens): Retry-After gives the seconds until it starts again (the next month or day, UTC); nothing was stored.", Shape: base.PlainError},
	http.StatusInternalServerError: {Description: "The server failed; the cause is logged, not shown.", Shape: base.PlainError},
	http.StatusBadGateway: {Description: "The model service failed, sent a reply longer than an answer may be stored (64 KiB), or an event stream " +
		"that was cut or was none; the user's message is kept in the conversation.", Shape: base.PlainError},
	http.StatusServiceUnavailable: {Description: "Chat is not configured on this server, or the CAT's agent mode has no model endpoint; " +
		"or, with Retry-After, the database is unreachable or busy with an import for now: nothing of the request was stored.", Shape: base.PlainError},
	http.StatusGatewayTimeout: {Description: "The model service did not answer in time; the user's message is kept in the conversation.", Shape: base.PlainError},
}

// errorResponses documents the error responses of an /api/v1/cat
// operation.
func errorResponses(api huma.API, statuses ...int) map[string]*huma.Response {
	return base.DocumentErrors(api, chatErrors, statuses...)
}
