package apitest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
)

// Resp is an answer of the app.
type Resp struct {
	Status int
	Header http.Header
	Body   []byte
}

// Decode reads the body as JSON into v.
func (r Resp) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("status %d body %q: %v", r.Status, r.Body, err)
	}
}

// ErrorBody reads an ErrorBody answer.
func (r Resp) ErrorBody(t testing.TB) base.ErrorBody {
	t.Helper()
	var b base.ErrorBody
	r.Decode(t, &b)
	return b
}

// Call sends a request; headers are "Name: value".
func (e *ChatEnv) Call(t testing.TB, method, target, auth string, body any, headers ...string) Resp {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, ok := body.(string)
		if !ok {
			b, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			raw = string(b)
		}
		rd = strings.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, e.Srv.URL+target, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	res, err := e.Srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Resp{Status: res.StatusCode, Header: res.Header, Body: b}
}

// Event is one Server-Sent Event.
type Event struct {
	Name string
	Data json.RawMessage
}

// Events parses an event stream.
func Events(t *testing.T, stream []byte) []Event {
	t.Helper()
	var out []Event
	var cur Event
	sc := bufio.NewScanner(bytes.NewReader(stream))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Name != "" || cur.Data != nil {
				out = append(out, cur)
			}
			cur = Event{}
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.Data = json.RawMessage(strings.TrimPrefix(line, "data: "))
		default:
			t.Fatalf("unexpected stream line %q", line)
		}
	}
	return out
}

// ContextWithCancel is a context cancelled when the test ends, or before.
func ContextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithCancel(t.Context())
}

// WaitFor polls cond until it holds, failing after a generous bound: for
// work the server finishes after the response (a cancelled stream's turn).
func WaitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("condition not reached within 10 s")
}
