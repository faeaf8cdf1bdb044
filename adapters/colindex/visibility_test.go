package colindex_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/core/analytics"
)

// pausingSource is a colindex.Feed that, once armed, stops in the middle of its
// next ReadSince, after pauseAt rows, until resume is closed: a refresh
// caught between two of the rows one SQL snapshot returned.
type pausingSource struct {
	colindex.Feed
	pauseAt int
	armed   atomic.Bool
	paused  chan struct{} // closed when the read has stopped
	resume  chan struct{} // closed by the test to let it go on
}

func (s *pausingSource) ReadSince(ctx context.Context, after int64, fn func(*analytics.FeedRow) error) (int64, error) {
	if !s.armed.CompareAndSwap(true, false) {
		return s.Feed.ReadSince(ctx, after, fn)
	}
	n := 0
	return s.Feed.ReadSince(ctx, after, func(r *analytics.FeedRow) error {
		if n == s.pauseAt {
			close(s.paused)
			<-s.resume
		}
		n++
		return fn(r)
	})
}

// counts is what a reader sees of the index: the total of each CAT and
// the sum of every dimension's groups of the first.
type counts struct {
	totals [2]int64
	groups [5]int64 // per analytics.Dimensions
}

// values lists the counts one by one.
func (c counts) values() []int64 { return append(c.totals[:], c.groups[:]...) }

func observe(ctx context.Context, t *testing.T, idx *colindex.Index, cats [2]string) counts {
	var c counts
	for k, cat := range cats {
		a, err := idx.Answer(ctx, analytics.Query{Cat: cat}, analytics.PartTotal)
		if err != nil {
			t.Errorf("Answer: %v", err)
		}
		c.totals[k] = a.Total
	}
	a, err := idx.Answer(ctx, analytics.Query{Cat: cats[0]}, analytics.AllParts)
	if err != nil {
		t.Errorf("Answer: %v", err)
	}
	for k, d := range analytics.Dimensions {
		for _, g := range a.Groups[d] {
			c.groups[k] += g.Count
		}
	}
	return c
}

// TestRefreshIsAtomic: the rows one ReadSince returns (one transaction of
// another process, several chunks long, in a CAT the index holds and in
// a new one) become visible all at once. While the read is stopped in
// the middle, after more rows than a chunk, readers on other goroutines
// see the counts from before; once Refresh returns, the counts after;
// never anything in between.
func TestRefreshIsAtomic(t *testing.T) {
	ctx := t.Context()
	m := newMemLog()
	r := rand.New(rand.NewPCG(11, 12))
	if _, err := m.Append(ctx, analytics.Each(tiedLog(r, 1000))); err != nil {
		t.Fatalf("Append: %v", err)
	}
	src := &pausingSource{Feed: m, pauseAt: 5000, paused: make(chan struct{}), resume: make(chan struct{})}
	idx := build(t, src)
	cats := [2]string{"c", "new"}
	before := observe(ctx, t, idx, cats)
	if before.totals[0] != 1000 || before.totals[1] != 0 {
		t.Fatalf("totals before = %v, want [1000 0]", before.totals)
	}

	// One transaction: 9,000 rows of the known CAT, then 3,000 of a new one.
	more := tiedLog(r, 12000)
	for k := 9000; k < len(more); k++ {
		more[k].Cat = "new"
	}
	if _, err := m.Append(ctx, analytics.Each(more)); err != nil {
		t.Fatalf("Append: %v", err)
	}
	after := counts{totals: [2]int64{10000, 3000}}
	for k := range after.groups {
		after.groups[k] = 10000
	}

	src.armed.Store(true)
	refreshed := make(chan error, 1)
	go func() { refreshed <- idx.Refresh(ctx) }()

	// A reader polls throughout and records what each of its queries
	// sees (one poll's queries may straddle the refresh, each may not).
	var (
		mu   sync.Mutex
		seen [len(counts{}.totals) + len(counts{}.groups)]map[int64]int
		stop = make(chan struct{})
		wg   sync.WaitGroup
	)
	for k := range seen {
		seen[k] = map[int64]int{}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c := observe(ctx, t, idx, cats)
			mu.Lock()
			for k, n := range c.values() {
				seen[k][n]++
			}
			mu.Unlock()
			select {
			case <-stop:
				return
			default:
			}
		}
	}()

	<-src.paused
	if got := observe(ctx, t, idx, cats); got != before {
		t.Errorf("while the read is stopped after %d rows: %+v, want the counts before %+v", src.pauseAt, got, before)
	}
	close(src.resume)
	if err := <-refreshed; err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if got := observe(ctx, t, idx, cats); got != after {
		t.Errorf("after Refresh: %+v, want %+v", got, after)
	}
	close(stop)
	wg.Wait()
	b, a := before.values(), after.values()
	for k := range seen {
		for n, times := range seen[k] {
			if n != b[k] && n != a[k] {
				t.Errorf("a reader's query %d saw %d (%d times): neither %d before nor %d after", k, n, times, b[k], a[k])
			}
		}
	}
	t.Logf("reader observations (query: value: times): %v", seen)
}
