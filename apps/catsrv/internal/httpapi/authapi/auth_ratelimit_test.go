package authapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/core/auth"
)

// limitedEnv is the auth app whose rate limiter runs on a clock of its own
// (the sessions' clock stays put), so the test decides when buckets refill.
func limitedEnv(t *testing.T, perSecond float64, burst int) (*AuthEnv, *clock.Fixed) {
	t.Helper()
	lc := clock.NewFixed(Now)
	e := NewAuthEnv(t, func(d *authapi.Deps) {
		d.RateLimit = authapi.RateLimit{PerSecond: perSecond, Burst: burst, Clock: lc}
	})
	return e, lc
}

// browserFrom is a browser whose connections come from the loopback
// address ip (Linux routes all of 127.0.0.0/8 to lo), so that the server
// sees another client address.
func browserFrom(e *AuthEnv, t *testing.T, ip string) *Browser {
	b := e.Browser(t)
	tr := e.Srv.Client().Transport.(*http.Transport).Clone()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	tr.DialContext = d.DialContext
	t.Cleanup(tr.CloseIdleConnections)
	b.Client.Transport = tr
	return b
}

// limitedReply is what one of many concurrent requests got.
type limitedReply struct {
	status     int
	retryAfter string
	body       base.ErrorBody
	err        error
}

// floodFrom sends n anonymous login starts from b, 8 at a time.
func floodFrom(b *Browser, n int) []limitedReply {
	out := make([]limitedReply, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				out[i] = try(b, http.MethodPost, AuthPrefix+"/"+auth.ProviderA+"?catname="+AuthCat)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// try sends one request without failing the test from a goroutine.
func try(b *Browser, method, path string) limitedReply {
	ctx, cancel := context.WithTimeout(b.T.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, b.E.Srv.URL+path, strings.NewReader(""))
	if err != nil {
		return limitedReply{err: err}
	}
	Resp, err := b.Client.Do(req)
	if err != nil {
		return limitedReply{err: err}
	}
	defer func() { _ = Resp.Body.Close() }()
	raw, err := io.ReadAll(Resp.Body)
	r := limitedReply{status: Resp.StatusCode, retryAfter: Resp.Header.Get("Retry-After"), err: err}
	if Resp.StatusCode == http.StatusTooManyRequests && err == nil {
		r.err = json.Unmarshal(raw, &r.body)
	}
	return r
}

// tally counts the replies by status, failing on transport errors and on
// any 429 without the ErrorBody and Retry-After.
func tally(t *testing.T, replies []limitedReply, wantRetry string) map[int]int {
	t.Helper()
	out := map[int]int{}
	for _, r := range replies {
		if r.err != nil {
			t.Fatal(r.err)
		}
		out[r.status]++
		if r.status != http.StatusTooManyRequests {
			continue
		}
		if r.retryAfter != wantRetry {
			t.Fatalf("429 with Retry-After %q, want %q", r.retryAfter, wantRetry)
		}
		if r.body.Code != "TOO_MANY_REQUESTS" || r.body.Status != http.StatusTooManyRequests || !strings.Contains(r.body.Message, "retry in "+wantRetry+" s") {
			t.Fatalf("429 body %+v", r.body)
		}
	}
	return out
}

// auditOf counts the audit events of one client IP by kind.
func auditOf(e *AuthEnv, t *testing.T, ip string) (total int, kinds map[auth.AuditKind]int) {
	t.Helper()
	Events, err := e.Store.Events(t.Context(), auth.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	kinds = map[auth.AuditKind]int{}
	for _, ev := range Events {
		if ev.IP == ip {
			total++
			kinds[ev.Kind]++
		}
	}
	return total, kinds
}

// One address flooding anonymous login starts is refused after its burst
// with 429 and Retry-After, its refusals audited once per window; another
// address is served meanwhile; after waiting, the first is served again.
func TestAuthRateLimitPerAddress(t *testing.T) {
	const burst, flood = 20, 200
	e, lc := limitedEnv(t, 1, burst)
	first, second := e.Browser(t), browserFrom(e, t, "127.0.0.2")

	got := tally(t, floodFrom(first, flood), "1")
	if got[http.StatusOK] != burst || got[http.StatusTooManyRequests] != flood-burst {
		t.Fatalf("%d starts from one address: %v, want %d OK and the rest 429", flood, got, burst)
	}
	if r := try(second, http.MethodPost, AuthPrefix+"/"+auth.ProviderB); r.err != nil || r.status != http.StatusOK {
		t.Fatalf("another address during the flood: %d %v, want 200", r.status, r.err)
	}
	total, kinds := auditOf(e, t, "127.0.0.1")
	if total > burst+1 || kinds[auth.AuditLoginStart] != burst || kinds[auth.AuditRateLimited] != 1 {
		t.Fatalf("audit of the flooding address: %d rows %v, want %d login_start and one rate_limited", total, kinds, burst)
	}
	if n, _ := auditOf(e, t, "127.0.0.2"); n != 1 {
		t.Fatalf("audit of the other address: %d rows, want its one login_start", n)
	}

	// Three seconds later three more starts are admitted; the refusals
	// after them fall in the same audit window and are not recorded.
	lc.Advance(3 * time.Second)
	got = tally(t, floodFrom(first, 10), "1")
	if got[http.StatusOK] != 3 || got[http.StatusTooManyRequests] != 7 {
		t.Fatalf("after 3 s: %v, want 3 OK and 7 429", got)
	}
	if _, kinds := auditOf(e, t, "127.0.0.1"); kinds[auth.AuditRateLimited] != 1 || kinds[auth.AuditLoginStart] != burst+3 {
		t.Fatalf("audit after 3 s: %v, want still one rate_limited", kinds)
	}

	// A minute later the bucket is full again and the window over: a new
	// flood gets the burst, and its refusal is audited once more.
	lc.Advance(time.Minute)
	got = tally(t, floodFrom(first, 50), "1")
	if got[http.StatusOK] != burst || got[http.StatusTooManyRequests] != 50-burst {
		t.Fatalf("after a minute: %v, want %d OK", got, burst)
	}
	if _, kinds := auditOf(e, t, "127.0.0.1"); kinds[auth.AuditRateLimited] != 2 {
		t.Fatalf("audit after a minute: %v, want a second rate_limited", kinds)
	}
}

// Retry-After is the limiter's wait, rounded up to whole seconds.
func TestAuthRateLimitRetryAfter(t *testing.T) {
	e, lc := limitedEnv(t, 0.25, 1)
	b := e.Browser(t)
	if r := try(b, http.MethodPost, AuthPrefix+"/"+auth.ProviderA); r.status != http.StatusOK {
		t.Fatalf("first start: %d %v", r.status, r.err)
	}
	tally(t, []limitedReply{try(b, http.MethodPost, AuthPrefix+"/"+auth.ProviderA)}, "4")
	lc.Advance(2500 * time.Millisecond)
	got := tally(t, []limitedReply{try(b, http.MethodPost, AuthPrefix+"/"+auth.ProviderA)}, "2")
	if got[http.StatusTooManyRequests] != 1 {
		t.Fatalf("after 2.5 s of 4: %v, want 429", got)
	}
	lc.Advance(1500 * time.Millisecond)
	if r := try(b, http.MethodPost, AuthPrefix+"/"+auth.ProviderA); r.status != http.StatusOK {
		t.Fatalf("after the wait: %d %v, want 200", r.status, r.err)
	}
}

// The routes an anonymous client can make write the audit log share the
// address's bucket; /providers and the memory routes are not limited.
func TestAuthRateLimitRoutes(t *testing.T) {
	e, _ := limitedEnv(t, 1, 1)
	b := e.Browser(t)
	if r := try(b, http.MethodPost, AuthPrefix+"/"+auth.ProviderA); r.status != http.StatusOK {
		t.Fatalf("start: %d %v", r.status, r.err)
	}
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{http.MethodPost, AuthPrefix + "/" + auth.ProviderC, http.StatusTooManyRequests},
		{http.MethodGet, AuthPrefix + "/" + auth.ProviderA + "/callback?code=x&state=y", http.StatusTooManyRequests},
		{http.MethodPost, AuthPrefix + "/refresh", http.StatusTooManyRequests},
		{http.MethodPost, AuthPrefix + "/logout", http.StatusTooManyRequests},
		{http.MethodGet, AuthPrefix + "/providers", http.StatusOK},
		{http.MethodGet, AuthPrefix + "/memory", http.StatusUnauthorized},
	} {
		t.Run(fmt.Sprintf("%s %s", c.method, c.path), func(t *testing.T) {
			r := try(b, c.method, c.path)
			if r.err != nil || r.status != c.want {
				t.Fatalf("%d %v, want %d", r.status, r.err, c.want)
			}
			if c.want == http.StatusTooManyRequests {
				if s, err := strconv.Atoi(r.retryAfter); err != nil || s < 1 {
					t.Fatalf("Retry-After %q", r.retryAfter)
				}
			}
		})
	}
	if _, kinds := auditOf(e, t, "127.0.0.1"); kinds[auth.AuditRateLimited] != 1 || kinds[auth.AuditLogout] != 0 || kinds[auth.AuditLoginFailure] != 0 {
		t.Fatalf("audit %v: want one rate_limited and nothing from the refused routes", kinds)
	}
}

// A signed-in user keeps using the session routes while the address
// floods the anonymous ones: memory needs a session and is not limited.
func TestAuthRateLimitLeavesSessionsAlone(t *testing.T) {
	e, _ := limitedEnv(t, 1, 3)
	b := e.Browser(t)
	if r := b.Login(auth.ProviderA); r.Status != http.StatusSeeOther {
		t.Fatalf("login: %d %s", r.Status, r.Body)
	}
	tally(t, floodFrom(b, 10), "1")
	for range 5 {
		if r := b.Do(http.MethodGet, AuthPrefix+"/memory", ""); r.Status != http.StatusOK {
			t.Fatalf("memory while limited: %d %s", r.Status, r.Body)
		}
	}
}
