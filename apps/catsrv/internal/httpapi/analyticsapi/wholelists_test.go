package analyticsapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"sync"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/analyticsapi"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/catconfig"
)

// heldLog is an interaction log whose raw answers with whole lists wait
// until released, counting how many run at once.
type heldLog struct {
	*memstore.Store
	mu      sync.Mutex
	running int
	most    int
	calls   int
	entered chan struct{} // one send per whole-list answer that starts
	release chan struct{} // one receive per whole-list answer that ends
	done    chan struct{} // closed when the test ends: every answer ends
}

func (l *heldLog) Answer(ctx context.Context, q analytics.Query, want analytics.Parts) (analytics.Counts, error) {
	if q.LimitOf(analytics.Question) > 0 {
		return l.Store.Answer(ctx, q, want)
	}
	l.mu.Lock()
	l.running++
	l.calls++
	l.most = max(l.most, l.running)
	l.mu.Unlock()
	select {
	case l.entered <- struct{}{}:
	case <-l.done:
	}
	select {
	case <-l.release:
	case <-l.done:
	}
	l.mu.Lock()
	l.running--
	l.mu.Unlock()
	return l.Store.Answer(ctx, q, want)
}

func (l *heldLog) counts() (most, calls int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.most, l.calls
}

// recv receives from ch, failing the test if nothing comes for long
// (a request stuck behind another, or answered when it should wait).
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s after 10 s", what)
		panic("unreachable")
	}
}

// send sends v on ch, failing the test if no one takes it for long.
func send[T any](t *testing.T, ch chan<- T, v T, what string) {
	t.Helper()
	select {
	case ch <- v:
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s after 10 s", what)
	}
}

// getter sends an admin's GET of an analytics route and query.
type getter func(ctx context.Context, query string) (int, http.Header, error)

// getting sends the GET on a goroutine of its own and its status to
// statuses once it is answered.
func getting(t *testing.T, get getter, query string, statuses chan<- int) {
	go func() {
		code, _, err := get(t.Context(), query)
		if err != nil {
			t.Error(err)
		}
		statuses <- code
	}()
}

// statusLog is a slog handler that passes on the status of every request
// line.
type statusLog struct{ statuses chan int }

func (h statusLog) Enabled(context.Context, slog.Level) bool { return true }
func (h statusLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h statusLog) WithGroup(string) slog.Handler            { return h }
func (h statusLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "request" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "status" {
			h.statuses <- int(a.Value.Int64())
		}
		return true
	})
	return nil
}

// wholeListServer serves the analytics routes over a heldLog, letting
// turns requests with whole lists in at once, each waiting at most wait
// for its turn (0: the default), and logging the status of every request
// to the returned channel.
func wholeListServer(t *testing.T, turns int, wait time.Duration) (*heldLog, chan int, getter) {
	t.Helper()
	t.Cleanup(httpapi.UseSpecErrors())
	clk := clock.NewFixed(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	cats := memstore.NewCats(catconfig.Defaults(ingestCat))
	store := memstore.New()
	log := &heldLog{Store: store, entered: make(chan struct{}, 8), release: make(chan struct{}), done: make(chan struct{})}
	tok, err := tokens.New([]byte(ingestSecret), "catsrv", "catsrv", clk)
	if err != nil {
		t.Fatal(err)
	}
	logged := make(chan int, 64)
	_, h := httpapi.New(httpapi.Deps{
		Reporter: reporter.New(cats, log, store, clk), Tokens: tok,
		Logger: slog.New(statusLog{logged}), WholeLists: turns, WholeListWait: wait,
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(log.done) }) // before srv.Close, which waits for the handlers
	admin, _, err := tok.Issue("root", auth.RoleAdmin, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	get := func(ctx context.Context, query string) (int, http.Header, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+analyticsapi.Prefix+query, nil)
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Authorization", "Bearer "+admin)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil, err
		}
		_ = res.Body.Close()
		return res.StatusCode, res.Header, nil
	}
	return log, logged, get
}

// TestWholeListsTakeTurns: /all and /all_legacy requests with whole lists
// (no limit, limit=0, a page or a search) are answered one at a time by
// default while requests with a limit pass them; a request whose client
// leaves while it waits ends (499 in the request log) without being
// answered; one that waits too long is answered 503 with Retry-After;
// with two turns, two run at once (which shows the test sees requests
// running together).
func TestWholeListsTakeTurns(t *testing.T) {
	t.Run("one turn", func(t *testing.T) {
		log, logged, get := wholeListServer(t, 0, 0)
		queries := []string{
			"/all?catname=" + ingestCat, "/all_legacy?catname=" + ingestCat + "&limit=0",
			"/all?catname=" + ingestCat + "&offset=0&limit=5", "/all_legacy?catname=" + ingestCat + "&q=x",
		}
		statuses := make(chan int, len(queries))
		for _, q := range queries {
			getting(t, get, q, statuses)
		}
		recv(t, log.entered, "whole-list answer") // one of them runs
		// A request with a limit is not held behind it.
		if code, _, err := get(t.Context(), "/all?catname="+ingestCat+"&limit=10"); err != nil || code != http.StatusOK {
			t.Fatalf("a request with a limit while a whole list is built: %d, %v", code, err)
		}
		if code := recv(t, logged, "request line"); code != http.StatusOK {
			t.Fatalf("the request with a limit logged %d", code)
		}
		// One whose client leaves while it waits ends, logged 499.
		// It leaves once its request is written: the server reads it and
		// sees the connection close while it waits for its turn.
		ctx, cancel := context.WithCancel(t.Context())
		wrote := make(chan struct{}, 1)
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) {
			select {
			case wrote <- struct{}{}:
			default:
			}
		}})
		left := make(chan error, 1)
		go func() { _, _, err := get(ctx, "/all?catname="+ingestCat); left <- err }()
		recv(t, wrote, "request of the client that leaves")
		cancel()
		if err := recv(t, left, "end of the request whose client left"); err == nil {
			t.Fatalf("the request whose client left was answered")
		}
		if code := recv(t, logged, "request line of the request whose client left"); code != 499 {
			t.Fatalf("the request whose client left logged %d, want 499", code)
		}
		for k := range queries {
			if k > 0 {
				recv(t, log.entered, "next whole-list answer")
			}
			send(t, log.release, struct{}{}, "whole-list answer to release")
			if code := recv(t, statuses, "response"); code != http.StatusOK {
				t.Errorf("status %d", code)
			}
		}
		if most, calls := log.counts(); most != 1 || calls != len(queries) {
			t.Errorf("%d whole-list answers ran at once, %d in all; want 1 and %d", most, calls, len(queries))
		}
	})
	t.Run("two turns", func(t *testing.T) {
		log, _, get := wholeListServer(t, 2, 0)
		statuses := make(chan int, 2)
		for range 2 {
			getting(t, get, "/all?catname="+ingestCat, statuses)
		}
		recv(t, log.entered, "whole-list answer")
		recv(t, log.entered, "second whole-list answer at once")
		for range 2 {
			send(t, log.release, struct{}{}, "whole-list answer to release")
			if code := recv(t, statuses, "response"); code != http.StatusOK {
				t.Errorf("status %d", code)
			}
		}
		if most, _ := log.counts(); most != 2 {
			t.Errorf("%d whole-list answers ran at once, want 2", most)
		}
	})
	t.Run("waited too long", func(t *testing.T) {
		log, _, get := wholeListServer(t, 1, 50*time.Millisecond)
		first := make(chan int, 1)
		getting(t, get, "/all?catname="+ingestCat, first)
		recv(t, log.entered, "whole-list answer")
		code, header, err := get(t.Context(), "/all_legacy?catname="+ingestCat)
		if err != nil || code != http.StatusServiceUnavailable || header.Get("Retry-After") == "" {
			t.Errorf("a request that waited too long: %d, Retry-After %q, %v; want 503 with Retry-After", code, header.Get("Retry-After"), err)
		}
		send(t, log.release, struct{}{}, "whole-list answer to release")
		if code := recv(t, first, "response"); code != http.StatusOK {
			t.Errorf("status %d", code)
		}
		if _, calls := log.counts(); calls != 1 {
			t.Errorf("%d whole-list answers, want 1", calls)
		}
	})
}
