package mcp

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/catsrv/catsrv/core/chat"
)

// scopeKey carries a call's chat.ToolScope in its context, down to the
// HTTP requests of the session.
type scopeKey struct{}

func withScope(ctx context.Context, scope chat.ToolScope) context.Context {
	return context.WithValue(ctx, scopeKey{}, scope)
}

// headerTransport sets an HTTP server's configured headers on each
// request, with {{cat}} and {{user}} filled from the request's scope. A
// request without a scope (the session's own: its start, its event
// stream) fills {{cat}} with the server's CAT and leaves out the headers
// naming {{user}}; a value that would not be a valid header value is left
// out too.
type headerTransport struct {
	headers map[string]string
	cat     string
	next    http.RoundTripper
}

func (h *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(h.headers) == 0 {
		return h.next.RoundTrip(req)
	}
	scope, scoped := req.Context().Value(scopeKey{}).(chat.ToolScope)
	if !scoped {
		scope.Cat = h.cat
	}
	req = req.Clone(req.Context())
	for name, tmpl := range h.headers {
		if !scoped && strings.Contains(tmpl, "{{user}}") {
			continue
		}
		v := strings.NewReplacer("{{user}}", scope.User, "{{cat}}", scope.Cat).Replace(tmpl)
		if validValue(v) {
			req.Header.Set(name, v)
		}
	}
	return h.next.RoundTrip(req)
}

// validValue reports whether v may be sent as a header value: no control
// byte other than tab.
func validValue(v string) bool {
	for i := range len(v) {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// baseTransport is c's transport, or the default one.
func baseTransport(c *http.Client) http.RoundTripper {
	if c != nil && c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

// stderrLog logs a stdio server's standard error, a line at a time (cut
// to maxLine bytes).
type stderrLog struct {
	log         *slog.Logger
	cat, server string
	mu          sync.Mutex
	buf         []byte
}

const maxLine = 1 << 10

func (w *stderrLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			room := max(0, maxLine-len(w.buf))
			w.buf = append(w.buf, p[:min(room, len(p))]...)
			break
		}
		room := max(0, maxLine-len(w.buf))
		w.buf = append(w.buf, p[:min(room, i)]...)
		w.log.Info("mcp server stderr", "cat", w.cat, "server", w.server, "line", string(w.buf))
		w.buf = w.buf[:0]
		p = p[i+1:]
	}
	return n, nil
}
