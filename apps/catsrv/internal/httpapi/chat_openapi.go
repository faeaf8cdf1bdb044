package httpapi

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// chatSecurity: every /api/v1/cat route needs a token (browsers may send
// the session cookie instead, which the document does not model).
var chatSecurity = []map[string][]string{{bearerScheme: {}}}

// chatErrors say when an /api/v1/cat route answers each error, and with
// which body: ErrorBody as chatErrorBody writes it, except that a 422
// may also be huma's ValidationError.
var chatErrors = map[int]errorDoc{
	http.StatusUnauthorized: {"No valid token (bearer or session cookie), or a revoked one.", plainError},
	http.StatusForbidden: {"A session cookie on a state-changing request from an origin not allowed (CSRF), " +
		"or a configuration route called without role admin.", plainError},
	http.StatusNotFound: {"The CAT is not configured, or the conversation does not exist or is not the caller's.", plainError},
	http.StatusUnprocessableEntity: {"The request breaks a rule (empty or oversized message, bad name, query, limit or cursor, " +
		"a configuration value out of range): ErrorBody VALIDATION_ERROR, whose message names the field. " +
		"A parameter or body that breaks the schema: ValidationError, listing each problem.", eitherError},
	http.StatusInternalServerError: {"The server failed; the cause is logged, not shown.", plainError},
	http.StatusBadGateway:          {"The model service failed; the user's message is kept in the conversation.", plainError},
	http.StatusServiceUnavailable: {"Chat is not configured on this server, or the CAT's agent mode has no model endpoint; " +
		"or, with Retry-After, the database is unreachable or busy with an import for now: nothing of the request was stored.", plainError},
	http.StatusGatewayTimeout: {"The model service did not answer in time; the user's message is kept in the conversation.", plainError},
}

// chatErrorResponses documents the error responses of an /api/v1/cat
// operation.
func chatErrorResponses(api huma.API, statuses ...int) map[string]*huma.Response {
	return documentErrors(api, chatErrors, statuses...)
}
