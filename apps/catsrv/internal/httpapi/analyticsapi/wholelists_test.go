package analyticsapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
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

// wholeListServer serves the analytics routes over a heldLog, letting
// turns requests with whole lists in at once.
func wholeListServer(t *testing.T, turns int) (*heldLog, func(ctx context.Context, query string) (int, error)) {
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
	_, h := httpapi.New(httpapi.Deps{
		Reporter: reporter.New(cats, log, store, clk), Tokens: tok,
		Logger: slog.New(slog.DiscardHandler), WholeLists: turns,
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(log.done) }) // before srv.Close, which waits for the handlers
	admin, _, err := tok.Issue("root", auth.RoleAdmin, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	get := func(ctx context.Context, query string) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+analyticsapi.Prefix+query, nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+admin)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		_ = res.Body.Close()
		return res.StatusCode, nil
	}
	return log, get
}

// TestWholeListsTakeTurns: /all and /all_legacy requests with whole lists
// (no limit, limit=0, a page or a search) are answered one at a time by
// default while requests with a limit pass them; a request whose client
// leaves while it waits is never answered; with two turns, two run at
// once (which shows the test sees requests running together).
func TestWholeListsTakeTurns(t *testing.T) {
	t.Run("one turn", func(t *testing.T) {
		log, get := wholeListServer(t, 0)
		queries := []string{
			"/all?catname=" + ingestCat, "/all_legacy?catname=" + ingestCat + "&limit=0",
			"/all?catname=" + ingestCat + "&offset=0&limit=5", "/all_legacy?catname=" + ingestCat + "&q=x",
		}
		statuses := make(chan int, len(queries))
		for _, q := range queries {
			go func() {
				code, err := get(t.Context(), q)
				if err != nil {
					t.Error(err)
				}
				statuses <- code
			}()
		}
		recv(t, log.entered, "whole-list answer") // one of them runs
		// A request with a limit is not held behind it.
		if code, err := get(t.Context(), "/all?catname="+ingestCat+"&limit=10"); err != nil || code != http.StatusOK {
			t.Fatalf("a request with a limit while a whole list is built: %d, %v", code, err)
		}
		// One whose client leaves while it waits is dropped.
		ctx, cancel := context.WithCancel(t.Context())
		left := make(chan error, 1)
		go func() { _, err := get(ctx, "/all?catname="+ingestCat); left <- err }()
		time.Sleep(100 * time.Millisecond) // let the requests reach their turn's queue
		cancel()
		if err := recv(t, left, "end of the request whose client left"); err == nil {
			t.Fatalf("the request whose client left was answered")
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
		log, get := wholeListServer(t, 2)
		statuses := make(chan int, 2)
		for range 2 {
			go func() {
				code, err := get(t.Context(), "/all?catname="+ingestCat)
				if err != nil {
					t.Error(err)
				}
				statuses <- code
			}()
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
}
