package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/catsrv/catsrv/client"
)

// probe is one request the conformance test sends to an operation.
type probe struct {
	name        string
	query       url.Values
	path        map[string]string
	rawQuery    string  // appended to the encoded query as it is
	body        *string // nil: no body
	contentType string
	accept      string
	role        string // the role of a fresh token, badToken, or "" for none
}

// badToken stands for a bearer token that is not one.
const badToken = "bad"

// oversize is larger than any request body an operation accepts.
const oversize = 2 << 20

// TestEveryResponseIsDocumented holds item 6 of issue 11: for every
// operation of the served document, found by walking the document so that
// a new operation is covered without editing this test, requests that are
// well formed, malformed, incomplete, with unknown fields, wrong types, bad
// or missing parameters and missing or weak credentials get a status the
// operation declares, with a body and headers its schema accepts.
func TestEveryResponseIsDocumented(t *testing.T) {
	e := NewChatEnv(t)
	// A redirect is an answer to check, not to follow.
	e.Srv.Client().CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	raw := e.Call(t, http.MethodGet, "/openapi.json", "", nil)
	if raw.Status != http.StatusOK {
		t.Fatalf("/openapi.json: %d", raw.Status)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw.Body)
	if err != nil {
		t.Fatal(err)
	}
	// First without the auth routes' rate limit, so that every probe
	// reaches its operation, then with it, for the 429s.
	for _, run := range []struct {
		name  string
		limit authapi.RateLimit
	}{{"rate limit off", authapi.RateLimit{Disabled: true}}, {"rate limit on", authapi.RateLimit{}}} {
		t.Run(run.name, func(t *testing.T) {
			e.RateLimit = run.limit
			e.Restart(t)
			operations := 0
			for _, path := range slices.Sorted(maps.Keys(doc.Paths.Map())) {
				item := doc.Paths.Value(path)
				for _, method := range slices.Sorted(maps.Keys(item.Operations())) {
					op := item.GetOperation(method)
					operations++
					t.Run(op.OperationID, func(t *testing.T) {
						if op.Responses.Default() != nil {
							t.Error("a default response: statuses that are not listed would pass for documented")
						}
						route := &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: op}
						for _, p := range probes(op) {
							req, res := send(e, t, method, path, p)
							if err := conforms(t, route, req, res); err != nil {
								t.Errorf("%s: %d %s\n%.300s\n%v", p.name, res.Status, res.Header.Get("Content-Type"), res.Body, err)
							}
						}
					})
				}
			}
			if operations < 30 {
				t.Errorf("only %d operations in the document", operations)
			}
		})
	}
}

// TestGeneratedClientTypesRequestErrors: the generated client decodes
// each error of a chat route into the type its status documents, so a 422
// of huma's validation is a ValidationError with its detail, a 422 of the
// chat rules an ErrorBody, and malformed JSON a 400.
func TestGeneratedClientTypesRequestErrors(t *testing.T) {
	e := NewChatEnv(t)
	c, err := client.NewClientWithResponses(e.Srv.URL, client.WithHTTPClient(e.Srv.Client()),
		client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", e.Token(t, "carol", "user"))
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	post := func(body string) *client.PostChatResponse {
		t.Helper()
		r, err := c.PostChatWithBodyWithResponse(t.Context(), &client.PostChatParams{}, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	r := post(`{"message": 1}`)
	if r.JSON422 == nil {
		t.Fatalf("schema error: %d %s", r.StatusCode(), r.Body)
	}
	invalid, err := r.JSON422.AsValidationError()
	if err != nil || len(invalid.Detail) != 1 || !reflect.DeepEqual(invalid.Detail[0].Loc, []any{"body", "message"}) {
		t.Errorf("schema error: %v %+v (%s)", err, invalid, r.Body)
	}

	r = post(`{"message": " "}`)
	if r.JSON422 == nil {
		t.Fatalf("blank message: %d %s", r.StatusCode(), r.Body)
	}
	if body, err := r.JSON422.AsErrorBody(); err != nil || body.Error != "VALIDATION_ERROR" || body.Status != http.StatusUnprocessableEntity {
		t.Errorf("blank message: %v %+v (%s)", err, body, r.Body)
	}

	r = post(`{"`)
	if r.JSON400 == nil {
		t.Fatalf("malformed JSON: %d %s", r.StatusCode(), r.Body)
	}
	if invalid, err := r.JSON400.AsValidationError(); err != nil || len(invalid.Detail) != 1 || !reflect.DeepEqual(invalid.Detail[0].Loc, []any{"body"}) {
		t.Errorf("malformed JSON: %v %+v (%s)", err, invalid, r.Body)
	}
}

// probes lists the requests sent to op: a well-formed one (with an admin
// token, a viewer token, a bad token and none), then one per missing or
// bad parameter and, when op takes a JSON body, bodies that are malformed,
// empty, of the wrong shape, incomplete, with an unknown field, with each
// property of the wrong type, or of another content type.
func probes(op *openapi3.Operation) []probe {
	good := probe{query: url.Values{}, path: map[string]string{}, role: "admin"}
	var Params []*openapi3.Parameter
	for _, ref := range op.Parameters {
		p := ref.Value
		Params = append(Params, p)
		switch {
		case p.In == openapi3.ParameterInPath:
			good.path[p.Name] = fmt.Sprint(sample(p.Name, p.Schema.Value))
		case p.In == openapi3.ParameterInQuery && p.Required:
			good.query.Set(p.Name, fmt.Sprint(sample(p.Name, p.Schema.Value)))
		}
	}
	var bodySchema *openapi3.Schema
	if op.RequestBody != nil {
		if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			bodySchema = mt.Schema.Value
			good.body = encodeJSON(sample("", bodySchema))
			good.contentType = "application/json"
		}
	}
	with := func(name string, change func(p *probe)) probe {
		p := good
		p.name = name
		p.query = maps.Clone(good.query)
		p.path = maps.Clone(good.path)
		change(&p)
		return p
	}
	out := []probe{
		with("well formed", func(*probe) {}),
		with("viewer token", func(p *probe) { p.role = "viewer" }),
		with("bad token", func(p *probe) { p.role = badToken }),
		with("no token", func(p *probe) { p.role = "" }),
		with("malformed query", func(p *probe) { p.rawQuery = "%zz=1" }),
		with("unknown query parameter", func(p *probe) { p.rawQuery = "zz_unknown=1" }),
		with("accepts only HTML", func(p *probe) { p.accept = "text/html" }),
	}
	for _, p := range Params {
		if p.In != openapi3.ParameterInQuery && p.In != openapi3.ParameterInPath {
			continue
		}
		if p.Required && p.In == openapi3.ParameterInQuery {
			out = append(out, with("missing "+p.Name, func(q *probe) { q.query.Del(p.Name) }))
		}
		for i, bad := range badValues(p.Schema.Value) {
			out = append(out, with(fmt.Sprintf("bad %s #%d", p.Name, i), func(q *probe) {
				if p.In == openapi3.ParameterInPath {
					q.path[p.Name] = bad[0]
				} else {
					q.query[p.Name] = bad
				}
			}))
		}
	}
	if bodySchema == nil {
		return out
	}
	for _, b := range []struct{ name, body string }{
		{"malformed JSON", `{"`}, {"truncated JSON", (*good.body)[:len(*good.body)-1]},
		{"empty body", ""}, {"null body", "null"}, {"array body", "[]"}, {"string body", `"x"`},
		{"incomplete body", "{}"},
	} {
		out = append(out, with(b.name, func(p *probe) { p.body = &b.body }))
	}
	if _, object := sample("", bodySchema).(map[string]any); object {
		out = append(out, with("unknown field", func(p *probe) {
			m := sample("", bodySchema).(map[string]any)
			m["zz_unknown"] = true
			p.body = encodeJSON(m)
		}))
	}
	for name, prop := range bodySchema.Properties {
		for i, wrong := range wrongTypes(prop.Value) {
			out = append(out, with(fmt.Sprintf("body %s of the wrong type #%d", name, i), func(p *probe) {
				m := sample("", bodySchema).(map[string]any)
				m[name] = wrong
				p.body = encodeJSON(m)
			}))
		}
	}
	out = append(out,
		with("text/plain body", func(p *probe) { p.contentType = "text/plain" }),
		with("no content type", func(p *probe) { p.contentType = "" }),
		with("oversize body", func(p *probe) { p.body = oversizeBody() }),
		with("oversize body and a bad parameter", func(p *probe) {
			p.body = oversizeBody()
			p.rawQuery = "catname=" + strings.Repeat("x", 1000)
		}),
	)
	return out
}

// catParams are parameters whose well-formed value must also exist: a
// CAT the fixture configures.
var catParams = map[string]bool{"catname": true}

// sample is a value that schema s accepts (name picks a configured CAT
// for catname): its default or first enum value, or the smallest thing of
// its type, with every required property.
func sample(name string, s *openapi3.Schema) any {
	switch {
	case catParams[name]:
		return LegacyCat
	case s.Default != nil:
		return s.Default
	case len(s.Enum) > 0:
		return s.Enum[0]
	}
	switch {
	case s.Type.Includes(openapi3.TypeString):
		text := "hello"
		if s.MaxLength != nil && int(*s.MaxLength) < len(text) {
			text = text[:*s.MaxLength]
		}
		return text
	case s.Type.Includes(openapi3.TypeInteger), s.Type.Includes(openapi3.TypeNumber):
		if s.Min != nil {
			return *s.Min
		}
		return 1
	case s.Type.Includes(openapi3.TypeBoolean):
		return false
	case s.Type.Includes(openapi3.TypeArray):
		return []any{}
	}
	m := map[string]any{}
	for _, r := range s.Required {
		if prop := s.Properties[r]; prop != nil {
			m[r] = sample(r, prop.Value)
		}
	}
	return m
}

// badValues are query or path values that break schema s: of another
// type, out of its range or enum, too long, too many, or text no
// database stores.
func badValues(s *openapi3.Schema) [][]string {
	item := s
	var out [][]string
	if s.Type.Includes(openapi3.TypeArray) && s.Items != nil {
		item = s.Items.Value
		if s.MaxItems != nil {
			many := make([]string, *s.MaxItems+1)
			for i := range many {
				many[i] = fmt.Sprint(sample("", item))
			}
			out = append(out, many)
		}
	}
	one := func(v string) { out = append(out, []string{v}) }
	switch {
	case len(item.Enum) > 0:
		one("not-one-of-the-values")
	case item.Type.Includes(openapi3.TypeInteger), item.Type.Includes(openapi3.TypeNumber):
		one("not-a-number")
		one("1e999")
		if item.Min != nil {
			one(fmt.Sprint(*item.Min - 1))
		}
		if item.Max != nil {
			one(fmt.Sprint(*item.Max + 1))
		}
	case item.Type.Includes(openapi3.TypeBoolean):
		one("maybe")
	case item.Type.Includes(openapi3.TypeString):
		one("a\x00b")
		one("\xff")
		one("not-a-date")
		if item.MaxLength != nil {
			one(strings.Repeat("x", int(*item.MaxLength)+1))
		}
	}
	return out
}

// wrongTypes are JSON values of another type than schema s allows.
func wrongTypes(s *openapi3.Schema) []any {
	var out []any
	for _, v := range []struct {
		typ   string
		value any
	}{
		{openapi3.TypeString, 12345}, {openapi3.TypeInteger, "x"}, {openapi3.TypeNumber, "x"},
		{openapi3.TypeBoolean, "x"}, {openapi3.TypeObject, []any{1}}, {openapi3.TypeArray, map[string]any{"a": 1}},
	} {
		if s.Type.Includes(v.typ) {
			out = append(out, v.value)
		}
	}
	if len(out) == 0 { // no type: anything goes, try a deep structure
		out = append(out, map[string]any{"a": []any{map[string]any{"b": nil}}})
	}
	return out
}

// oversizeBody is a JSON object of oversize bytes.
func oversizeBody() *string {
	return encodeJSON(map[string]string{"message": strings.Repeat("x", oversize)})
}

func encodeJSON(v any) *string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	s := string(b)
	return &s
}

// send makes the request of p to the operation at path. It returns a
// request of the same method and target too, which the validation of the
// response reads.
func send(e *ChatEnv, t *testing.T, method, path string, p probe) (*http.Request, Resp) {
	t.Helper()
	for name, v := range p.path {
		path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(v))
	}
	query := p.query.Encode()
	if p.rawQuery != "" {
		query = strings.TrimPrefix(query+"&"+p.rawQuery, "&")
	}
	target := path
	if query != "" {
		target += "?" + query
	}
	var auth string
	switch p.role {
	case "":
	case badToken:
		auth = "Bearer not-a-token"
	default:
		// A fresh token: a logout probe revokes the one it presents.
		auth = e.Token(t, "user-"+p.role, p.role)
	}
	headers := []string{"Accept: application/json", "Content-Type: " + p.contentType}
	if p.accept != "" {
		headers[0] = "Accept: " + p.accept
	}
	var body any // nil: no body
	if p.body != nil {
		body = *p.body
	}
	return httptest.NewRequest(method, target, nil), e.Call(t, method, target, auth, body, headers...)
}

// conforms checks a response against its operation in the document: a
// declared status, a declared content type, headers and a body its schema
// accepts. Bodies of types kin-openapi cannot decode (an event stream)
// are checked for their content type only.
func conforms(t *testing.T, route *routers.Route, req *http.Request, res Resp) error {
	t.Helper()
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
	if ct, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); ct != "" && !strings.HasSuffix(ct, "json") && ct != "text/csv" {
		r := route.Operation.Responses.Status(res.Status)
		if r == nil || r.Value.Content.Get(ct) == nil {
			return fmt.Errorf("content type %q is not declared for %d", ct, res.Status)
		}
		opts.ExcludeResponseBody = true
	}
	return openapi3filter.ValidateResponse(t.Context(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, Route: route},
		Status:                 res.Status,
		Header:                 res.Header,
		Body:                   io.NopCloser(bytes.NewReader(res.Body)),
		Options:                opts,
	})
}
