package analyticsapi_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"net/http"
	"reflect"
	"testing"
	"testing/quick"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/analyticsapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
)

// TestStreamedBodies checks that every body that writes its own JSON writes
// exactly what encoding/json (huma's default format) writes for it, over
// random values of every field: lists nil, empty or long, text with HTML,
// quotes and control characters, totals present or absent. A field added
// to a body and forgotten in its StreamJSON fails here.
func TestStreamedBodies(t *testing.T) {
	api := base.NewAPI(http.NewServeMux(), nil)
	rng := rand.New(rand.NewSource(1))
	bodies := []any{
		analyticsapi.AnalyticsResult{}, analyticsapi.WarehouseResult{}, analyticsapi.LegacyResult{},
		analyticsapi.QuestionsBody{}, analyticsapi.AnswersBody{},
	}
	for _, zero := range bodies {
		typ := reflect.TypeOf(zero)
		if _, ok := zero.(base.JSONStreamer); !ok {
			t.Fatalf("%s does not stream", typ)
		}
		t.Run(typ.Name(), func(t *testing.T) {
			for i := range 200 {
				v, ok := quick.Value(typ, rng)
				if !ok {
					t.Fatalf("cannot generate a %s", typ)
				}
				body := v.Interface()
				if i%4 == 0 {
					body = withText(t, body, "<b>&amp;\"quoted\"\\ \u2028\x01 é 😀</b>")
				}
				var want, got bytes.Buffer
				if err := huma.DefaultJSONFormat.Marshal(&want, body); err != nil {
					t.Fatal(err)
				}
				if err := api.Marshal(&got, "application/json", body); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Fatalf("streamed body differs:\n got %.600s\nwant %.600s", got.Bytes(), want.Bytes())
				}
			}
		})
	}
}

// withText sets every string of the body's lists (and the body's own
// strings) to s, so escaping is exercised on every field.
func withText(t *testing.T, body any, s string) any {
	t.Helper()
	v := reflect.New(reflect.TypeOf(body)).Elem()
	v.Set(reflect.ValueOf(body))
	var set func(reflect.Value)
	set = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			v.SetString(s)
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					set(v.Field(i))
				}
			}
		case reflect.Slice:
			for i := range v.Len() {
				set(v.Index(i))
			}
		}
	}
	set(v)
	return v.Interface()
}

// failingWriter fails after n bytes.
type failingWriter struct{ n int }

func (w *failingWriter) Write(b []byte) (int, error) {
	if len(b) > w.n {
		return 0, errors.New("connection closed")
	}
	w.n -= len(b)
	return len(b), nil
}

// TestStreamedBodyWriteError checks that a failing connection is reported
// rather than ignored.
func TestStreamedBodyWriteError(t *testing.T) {
	api := base.NewAPI(http.NewServeMux(), nil)
	body := analyticsapi.QuestionsBody{Questions: make([]analyticsapi.QuestionEntry, 100000)}
	if err := api.Marshal(&failingWriter{n: 100 << 10}, "application/json", body); err == nil {
		t.Fatal("a failed write was not reported")
	}
}

// BenchmarkBodyJSON encodes a body with 300,000 questions and answers (the
// size of a no-limit list at 10M interactions) the default way and
// streamed; B/op is the memory a response holds on the way out.
func BenchmarkBodyJSON(b *testing.B) {
	api := base.NewAPI(http.NewServeMux(), nil)
	const n = 300000
	body := analyticsapi.WarehouseResult{DataSource: "warehouse"}
	for i := range n {
		body.Questions = append(body.Questions, analyticsapi.QuestionEntry{
			ID: "q-" + string(rune('a'+i%26)) + "0123456789", Question: "How do I reset the password of my account, number " + string(rune('a'+i%26)) + "?", Count: int64(i)})
		body.Answers = append(body.Answers, analyticsapi.AnswerEntry{
			ID: "a-" + string(rune('a'+i%26)) + "0123456789", Answers: "Open the settings page and choose the reset link; it is under account " + string(rune('a'+i%26)) + ".", Count: int64(i)})
	}
	for _, c := range []struct {
		name    string
		marshal func(w io.Writer) error
	}{
		{"default", func(w io.Writer) error { return huma.DefaultJSONFormat.Marshal(w, body) }},
		{"streamed", func(w io.Writer) error { return api.Marshal(w, "application/json", body) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.marshal(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
