package httpapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"strconv"

	"github.com/danielgtaylor/huma/v2"
)

// Tags group the operations in the document.
const (
	tagAnalytics = "analytics"
	tagHealth    = "health"
)

// security lets a caller either send a bearer token or nothing: whether a
// token is needed depends on the CAT's configuration, which the document
// cannot know.
var security = []map[string][]string{{bearerScheme: {}}, {}}

// errorResponses documents the error responses an operation can give.
// Describing 500 as analytics errors is right for every route but /healthz,
// whose only 500 is a recovered panic (ErrorBody all the same). They
// are declared here rather than through huma's Operation.Errors, whose
// schema would be whatever huma.NewError happens to return when the route is
// registered.
func errorResponses(api huma.API, statuses ...int) map[string]*huma.Response {
	registry := api.OpenAPI().Components.Schemas
	errBody := registry.Schema(reflect.TypeFor[ErrorBody](), true, "ErrorBody")
	invalid := registry.Schema(reflect.TypeFor[ValidationError](), true, "ValidationError")
	descriptions := map[int]string{
		http.StatusUnauthorized:        "The CAT is not public and the request has no valid bearer token.",
		http.StatusForbidden:           "The bearer token is valid but its role is not admin.",
		http.StatusUnprocessableEntity: "A parameter is missing or invalid; the body lists each problem.",
		http.StatusInternalServerError: "Error " + AnalyticsErrorCode + ": the CAT is not configured, a date is not YYYY-MM-DD, " +
			"startDate is not before endDate, or the analytics store failed.",
		http.StatusServiceUnavailable: "Error " + AnalyticsErrorCode + ": the database is unreachable for now; try again after Retry-After seconds.",
	}
	out := make(map[string]*huma.Response, len(statuses))
	for _, status := range statuses {
		schema := errBody
		if status == http.StatusUnprocessableEntity {
			schema = invalid
		}
		r := &huma.Response{
			Description: descriptions[status],
			Content:     map[string]*huma.MediaType{"application/json": {Schema: schema}},
		}
		switch status {
		case http.StatusUnauthorized:
			r.Headers = map[string]*huma.Header{
				"WWW-Authenticate": {Description: "Always Bearer.", Schema: &huma.Schema{Type: huma.TypeString}},
			}
		case http.StatusServiceUnavailable:
			r.Headers = map[string]*huma.Header{
				"Retry-After": {Description: "Seconds to wait before trying again.", Schema: &huma.Schema{Type: huma.TypeInteger}},
			}
		}
		out[strconv.Itoa(status)] = r
	}
	return out
}

// schemaRef matches a reference to a component schema in marshalled JSON.
var schemaRef = regexp.MustCompile(`"\$ref":"#/components/schemas/([^"]+)"`)

// pruneSchemas removes the component schemas no operation refers to. huma
// registers the type huma.NewError returns at the time each route is
// registered, even when, as here, no response uses it; without pruning the
// document would depend on whether UseSpecErrors ran first.
func pruneSchemas(oapi *huma.OpenAPI) {
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
