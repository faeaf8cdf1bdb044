package base

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// Security lets a caller either send a bearer token or nothing: whether a
// token is needed depends on the CAT's configuration, which the document
// cannot know.
var Security = []map[string][]string{{BearerScheme: {}}, {}}

// Public is the security of operations anyone may call: an empty list,
// written "security: []", so that the document says they need nothing
// rather than leaving it unsaid.
var Public = []map[string][]string{}

// ErrorShape is which body an error response has.
type ErrorShape int

const (
	// PlainError is ErrorBody, the application error body of spec §7.
	PlainError ErrorShape = iota
	// InvalidRequest is ValidationError: what huma's validation of the
	// parameters and the body found.
	InvalidRequest
	// EitherError is RequestError, one of the two: ValidationError when
	// huma's validation found problems, ErrorBody otherwise.
	EitherError
)

// ErrorDoc documents one error status of a family of operations.
type ErrorDoc struct {
	Description string
	Shape       ErrorShape
}

// requestError names the schema that is ValidationError or ErrorBody.
const requestError = "RequestError"

// HumaErrors are the answers huma gives before a handler runs, from its
// validation of the request, and the 500 of a handler that panicked
// (DocumentHumaErrors).
var HumaErrors = map[int]ErrorDoc{
	http.StatusBadRequest: {"The body is not valid JSON (ValidationError located at body), " +
		"or there is none (ErrorBody).", EitherError},
	http.StatusRequestTimeout: {"The body did not arrive within 5 seconds " +
		"(ErrorBody; ValidationError when a parameter is invalid too).", EitherError},
	http.StatusRequestEntityTooLarge: {"The body is larger than the operation accepts " +
		"(ErrorBody; ValidationError when a parameter is invalid too).", EitherError},
	http.StatusUnsupportedMediaType: {"The body's Content-Type is not application/json.", InvalidRequest},
	http.StatusUnprocessableEntity:  {"A parameter or the body breaks the schema; the body lists each problem.", InvalidRequest},
	http.StatusInternalServerError:  {"The server failed; the cause is logged, not shown.", PlainError},
}

// DocumentErrors documents error statuses by a family's table; a status
// the table lacks is described as huma's (HumaErrors). The error
// responses are declared here rather than through huma's
// Operation.Errors, whose schema would be whatever huma.NewError happens
// to return when the route is registered.
func DocumentErrors(api huma.API, table map[int]ErrorDoc, statuses ...int) map[string]*huma.Response {
	out := make(map[string]*huma.Response, len(statuses)+1) // huma adds the 2xx
	for _, status := range statuses {
		d, ok := table[status]
		if !ok {
			d = HumaErrors[status]
		}
		out[strconv.Itoa(status)] = &huma.Response{
			Description: d.Description,
			Headers:     errorHeaders(status),
			Content:     map[string]*huma.MediaType{"application/json": {Schema: errorSchema(api, d.Shape)}},
		}
	}
	return out
}

// errorHeaders are the headers that go with an error status: the scheme a
// 401 asks for, and when to try again after a 429 or a 503
// (FailureHeaders).
func errorHeaders(status int) map[string]*huma.Header {
	switch status {
	case http.StatusUnauthorized:
		return map[string]*huma.Header{
			"WWW-Authenticate": {Description: "Always Bearer.", Schema: &huma.Schema{Type: huma.TypeString}},
		}
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return map[string]*huma.Header{
			"Retry-After": {Description: "Seconds to wait before trying again, when the failure is expected to pass.",
				Schema: &huma.Schema{Type: huma.TypeInteger}},
		}
	}
	return nil
}

// errorSchema is the schema of an error body of the given shape,
// registering the components it refers to.
func errorSchema(api huma.API, s ErrorShape) *huma.Schema {
	registry := api.OpenAPI().Components.Schemas
	errBody := registry.Schema(reflect.TypeFor[ErrorBody](), true, "ErrorBody")
	invalid := registry.Schema(reflect.TypeFor[ValidationError](), true, "ValidationError")
	switch s {
	case InvalidRequest:
		return invalid
	case EitherError:
		registry.Map()[requestError] = &huma.Schema{
			Description: "ValidationError when huma's validation of the parameters or body found problems, ErrorBody otherwise.",
			OneOf:       []*huma.Schema{invalid, errBody},
		}
		return &huma.Schema{Ref: schemaRefPrefix + requestError}
	}
	return errBody
}

// schemaRefPrefix starts a reference to a component schema.
const schemaRefPrefix = "#/components/schemas/"

// OwnBodyMetadata is the key of Operation.Metadata that marks (true) an
// operation whose handler reads its body itself (huma never reads it, so
// none of huma's body errors can happen): its document lists the body's
// errors itself.
const OwnBodyMetadata = "catsrv-own-body"

// DocumentHumaErrors adds to every operation registered so far the error
// responses huma gives before its handler runs, where the operation does
// not document the status already: 400, 408, 413, 415 and 422 when it
// takes a body huma reads (not OwnBodyMetadata), 422 when it takes
// parameters, and everywhere the 500 of a handler that panicked.
func DocumentHumaErrors(api huma.API) {
	for _, item := range api.OpenAPI().Paths {
		for _, op := range []*huma.Operation{item.Get, item.Put, item.Post, item.Delete, item.Patch} {
			if op == nil {
				continue
			}
			var statuses []int
			ownBody, _ := op.Metadata[OwnBodyMetadata].(bool)
			if op.RequestBody != nil && !ownBody {
				statuses = append(statuses, http.StatusBadRequest, http.StatusRequestTimeout, http.StatusRequestEntityTooLarge,
					http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity)
			} else if len(op.Parameters) > 0 {
				statuses = append(statuses, http.StatusUnprocessableEntity)
			}
			statuses = append(statuses, http.StatusInternalServerError)
			for status, r := range DocumentErrors(api, HumaErrors, statuses...) {
				if _, ok := op.Responses[status]; !ok {
					op.Responses[status] = r
				}
			}
		}
	}
}

// DeclarePublic gives "security: []" to the operations under prefix that
// declare no security, saying that they need none.
func DeclarePublic(oapi *huma.OpenAPI, prefix string) {
	for path, item := range oapi.Paths {
		if !strings.HasPrefix(path, prefix) {
			continue
		}
		for _, op := range []*huma.Operation{item.Get, item.Put, item.Post, item.Delete, item.Patch} {
			if op != nil && op.Security == nil {
				op.Security = Public
			}
		}
	}
}

// schemaRef matches a reference to a component schema in marshalled JSON.
var schemaRef = regexp.MustCompile(`"\$ref":"` + schemaRefPrefix + `([^"]+)"`)

// PruneSchemas removes the component schemas no operation refers to. huma
// registers the type huma.NewError returns at the time each route is
// registered, even when, as here, no response uses it; without pruning the
// document would depend on whether UseSpecErrors ran first.
func PruneSchemas(oapi *huma.OpenAPI) {
	schemas := oapi.Components.Schemas.Map()
	paths, err := json.Marshal(oapi.Paths)
	if err != nil {
		return // keep everything rather than drop what is used
	}
	used := map[string]bool{}
	queue := refs(paths)
	for len(queue) > 0 {
		name := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if used[name] {
			continue
		}
		used[name] = true
		if s, ok := schemas[name]; ok {
			b, err := json.Marshal(s)
			if err != nil {
				return
			}
			queue = append(queue, refs(b)...)
		}
	}
	for name := range schemas {
		if !used[name] {
			delete(schemas, name)
		}
	}
}

// refs lists the schema names referred to in marshalled JSON.
func refs(doc []byte) []string {
	var out []string
	for _, m := range schemaRef.FindAllSubmatch(doc, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// confinedRoleForbidden documents the 403 Authenticate gives a token whose
// role may not call an operation at all.
const confinedRoleForbidden = "The bearer token's role may not call this operation: an ingest token may only ingest."

// documentConfinedRoles adds the 403 of Authenticate to every operation
// that takes a bearer token and documents no 403 of its own.
func documentConfinedRoles(api huma.API) {
	for _, item := range api.OpenAPI().Paths {
		for _, op := range []*huma.Operation{item.Get, item.Put, item.Post, item.Delete, item.Patch} {
			if op == nil || op.Responses == nil || op.Responses["403"] != nil || !takesBearer(op) {
				continue
			}
			op.Responses["403"] = DocumentErrors(api, map[int]ErrorDoc{
				http.StatusForbidden: {Description: confinedRoleForbidden, Shape: PlainError},
			}, http.StatusForbidden)["403"]
		}
	}
}

// takesBearer reports whether an operation's security lists the bearer
// scheme.
func takesBearer(op *huma.Operation) bool {
	for _, req := range op.Security {
		if _, ok := req[BearerScheme]; ok {
			return true
		}
	}
	return false
}
