package base

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
)

func TestLocation(t *testing.T) {
	cases := []struct {
		in   string
		want []any
	}{
		{"query.catname", []any{"query", "catname"}},
		{"query.model[3]", []any{"query", "model", 3}},
		{"body.items[3].tags[0]", []any{"body", "items", 3, "tags", 0}},
		{"query", []any{"query"}},
		{"", []any{}},
		{"query.x[y]", []any{"query", "x", "y"}},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			if got := location(c.in); !reflect.DeepEqual(got, c.want) {
				t.Errorf("location(%q) = %#v, want %#v", c.in, got, c.want)
			}
		})
	}
}

func TestSpecErrorShapes(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		msg     string
		details []error
		want    string
	}{
		{"missing parameter", 422, "validation failed",
			[]error{&huma.ErrorDetail{Location: "query.catname", Message: "required query parameter is missing", Value: ""}},
			`{"detail":[{"loc":["query","catname"],"msg":"field required","type":"value_error.missing"}]}`},
		{"value not echoed", 422, "validation failed",
			[]error{&huma.ErrorDetail{Location: "query.topic[1]", Message: "expected length <= 4096", Value: "hostile"}},
			`{"detail":[{"loc":["query","topic",1],"msg":"expected length <= 4096","type":"value_error"}]}`},
		{"not a validation error", 406, "unable to marshal response", []error{errors.New("no format")},
			`{"error":"NOT_ACCEPTABLE","status":406,"message":"unable to marshal response"}`},
		{"server error hides its message", 500, "unexpected error occurred", []error{errors.New("secret cause")},
			`{"error":"INTERNAL_SERVER_ERROR","status":500,"message":"internal error"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := specError(c.status, c.msg, c.details...)
			if e.GetStatus() != c.status {
				t.Errorf("status %d, want %d", e.GetStatus(), c.status)
			}
			// As huma writes it: no HTML escaping.
			var b strings.Builder
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(e); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(b.String()); got != c.want {
				t.Errorf("body %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestSpecErrorBoundsDetails(t *testing.T) {
	var details []error
	for range 1000 {
		details = append(details, &huma.ErrorDetail{Location: "query.topic", Message: "bad"})
	}
	e, ok := specError(422, "validation failed", details...).(*validationError)
	if !ok || len(e.Detail) != maxDetailItems {
		t.Errorf("got %T with %d entries, want %d", e, len(e.Detail), maxDetailItems)
	}
}
