package httpapi

import (
	"net/http"
	"reflect"
	"strconv"

	"github.com/danielgtaylor/huma/v2"
)

// chatSecurity: every /api/v1/cat route needs a token (browsers may send
// the session cookie instead, which the document does not model).
var chatSecurity = []map[string][]string{{bearerScheme: {}}}

// chatErrorDescriptions say when an /api/v1/cat route answers each error.
var chatErrorDescriptions = map[int]string{
	http.StatusUnauthorized: "No valid token (bearer or session cookie), or a revoked one.",
	http.StatusForbidden: "A session cookie on a state-changing request from an origin not allowed (CSRF), " +
		"or a configuration route called without role admin.",
	http.StatusNotFound: "The CAT is not configured, or the conversation does not exist or is not the caller's.",
	http.StatusUnprocessableEntity: "The request breaks a rule (empty or oversized message, bad name, query, limit or cursor, " +
		"a configuration value out of range): the message names the field. Malformed bodies get the detail list of ValidationError.",
	http.StatusInternalServerError: "The server failed; the cause is logged, not shown.",
	http.StatusBadGateway:          "The model service failed; the user's message is kept in the conversation.",
	http.StatusServiceUnavailable: "Chat is not configured on this server, or the CAT's agent mode has no model endpoint; " +
		"or, with Retry-After, the database is unreachable or busy with an import for now: nothing of the request was stored.",
	http.StatusGatewayTimeout: "The model service did not answer in time; the user's message is kept in the conversation.",
}

// chatErrorResponses documents the error responses of an /api/v1/cat
// operation: all ErrorBody, as chatErrorBody writes them.
func chatErrorResponses(api huma.API, statuses ...int) map[string]*huma.Response {
	errBody := api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[ErrorBody](), true, "ErrorBody")
	out := make(map[string]*huma.Response, len(statuses))
	for _, status := range statuses {
		r := &huma.Response{
			Description: chatErrorDescriptions[status],
			Content:     map[string]*huma.MediaType{"application/json": {Schema: errBody}},
		}
		switch status {
		case http.StatusUnauthorized:
			r.Headers = map[string]*huma.Header{
				"WWW-Authenticate": {Description: "Always Bearer.", Schema: &huma.Schema{Type: huma.TypeString}},
			}
		case http.StatusServiceUnavailable:
			r.Headers = map[string]*huma.Header{
				"Retry-After": {Description: "Seconds to wait before trying again, when the failure is expected to pass.", Schema: &huma.Schema{Type: huma.TypeInteger}},
			}
		}
		out[strconv.Itoa(status)] = r
	}
	return out
}
