package sqlstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/core/analytics"
)

// committed is what a commit told TellCommits's function.
type committed struct {
	rows     []analytics.FeedRow
	complete bool
}

// indexTotal is the column index's count of every api row, both CATs.
func indexTotal(t *testing.T, idx *colindex.Index) int64 {
	t.Helper()
	var n int64
	for _, cat := range []string{"alpha", "beta"} {
		a, err := idx.Answer(t.Context(), analytics.Query{Cat: cat}, analytics.PartTotal)
		if err != nil {
			t.Fatalf("index Answer(%s): %v", cat, err)
		}
		n += a.Total
	}
	return n
}

// TestToldCommitsCountedOnce: the column index told of every commit
// (TellCommits, Index.Hold) counts each write before it returns: turns
// (WriteTx with AppendTx, twice in one transaction), HTTP-sized Appends
// with interaction ids (a retried batch stores and tells nothing new),
// other event kinds (stored, not counted) and an Append of more api rows
// than a transaction hands over (told without its rows: the index reads them).
// Rows a refresh read between their commit and the hold are not held
// again; when the feed gives held rows, the index drops them: after
// refreshes it still equals the reference, every row counted once.
func TestToldCommitsCountedOnce(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			s := openStore(t, b.DSN(t))
			idx, err := colindex.Build(t.Context(), s)
			if err != nil {
				t.Fatal(err)
			}
			var (
				told         []committed
				refreshFirst bool
			)
			s.TellCommits(func(rows []analytics.FeedRow, givenAt int64, complete bool) {
				told = append(told, committed{rows, complete})
				if refreshFirst {
					// A refresh reads the rows between the commit and the hold.
					if err := idx.Refresh(t.Context()); err != nil {
						t.Error(err)
					}
				}
				idx.Hold(rows, givenAt, complete)
			})
			var written []analytics.Interaction
			check := func(step string) {
				t.Helper()
				if got, want := indexTotal(t, idx), int64(len(apiOnly(written))); got != want {
					t.Fatalf("%s: the index counts %d api rows, %d were written", step, got, want)
				}
			}
			in := sampleLog(3, 1)
			if err := s.WriteTx(t.Context(), func(ctx context.Context, tx bun.Tx) error {
				if err := s.AppendTx(ctx, tx, in[:1]); err != nil {
					return err
				}
				return s.AppendTx(ctx, tx, in[1:])
			}); err != nil {
				t.Fatal(err)
			}
			written = append(written, in...)
			check("a turn of two AppendTx calls")
			if len(told) != 1 || len(told[0].rows) != len(apiOnly(in)) || !told[0].complete {
				t.Fatalf("told %+v, want one complete commit of %d rows", told, len(apiOnly(in)))
			}
			batch := sampleLog(1000, 2)
			for k := range batch {
				batch[k].InteractionID = fmt.Sprintf("b-%d", k)
			}
			for range 2 { // the retry stores nothing and tells nothing
				if _, err := s.Append(t.Context(), sliceSeq(batch)); err != nil {
					t.Fatal(err)
				}
			}
			written = append(written, batch...)
			check("a batch of 1000 with ids, sent twice")
			if len(told) != 2 {
				t.Fatalf("told of %d commits, want 2 (the retry wrote nothing)", len(told))
			}
			long := sampleLog(12000, 3) // 9000 api rows, more than a commit hands over
			if _, err := s.Append(t.Context(), sliceSeq(long)); err != nil {
				t.Fatal(err)
			}
			written = append(written, long...)
			check("an Append of 12000")
			if last := told[len(told)-1]; last.complete || len(last.rows) != 0 {
				t.Fatalf("an Append of 12000 was told with %d rows (complete %v), want none, incomplete", len(last.rows), last.complete)
			}
			for k := range 5 {
				turn(t, s, sampleLog(1+k, 10+k))
				written = append(written, sampleLog(1+k, 10+k)...)
			}
			check("five turns")
			refreshFirst = true
			for k := range 3 {
				turn(t, s, sampleLog(2+k, 20+k))
				written = append(written, sampleLog(2+k, 20+k)...)
			}
			check("three turns read by a refresh before they were held")
			refreshFirst = false
			for range 2 {
				if err := idx.Refresh(t.Context()); err != nil {
					t.Fatal(err)
				}
				check("after the feed gave the held rows again")
			}
			expectMatchesReference(t, "index", idx, normalized(written))
			// A second index, built from the database now, agrees.
			fresh, err := colindex.Build(t.Context(), s)
			if err != nil {
				t.Fatal(err)
			}
			expectMatchesReference(t, "index built afterwards", fresh, normalized(written))
		})
	}
}

// TestToldCommitsConcurrent: on PostgreSQL, writers on many connections
// commit out of id order while the index is told of every commit and
// refreshes all along: each writer finds its own rows counted when its
// write returns, and at the end every row is counted exactly once.
func TestToldCommitsConcurrent(t *testing.T) {
	t.Parallel() // own stores only
	s := openStore(t, sqltest.PostgresDSN(t))
	idx, err := colindex.Build(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	s.TellCommits(idx.Hold)
	const (
		writers = 8
		each    = 25
	)
	var (
		mu      sync.Mutex
		written []analytics.Interaction
		done    atomic.Int64 // api rows of the writes that have returned
		wg      sync.WaitGroup
		failed  = make(chan error, writers)
	)
	for w := range writers {
		wg.Go(func() {
			for k := range each {
				in := sampleLog(1+(w+k)%3, w*1000+k)
				var err error
				if k%5 == 4 {
					_, err = s.Append(context.Background(), sliceSeq(sampleLog(100, w*1000+k)))
					in = sampleLog(100, w*1000+k)
				} else {
					err = s.WriteTx(context.Background(), func(ctx context.Context, tx bun.Tx) error {
						return s.AppendTx(ctx, tx, in)
					})
				}
				if err != nil {
					failed <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
				before := done.Add(int64(len(apiOnly(in))))
				mu.Lock()
				written = append(written, in...)
				mu.Unlock()
				// Every write that has returned is counted, this one too.
				if got := indexTotalCtx(idx); got < before {
					failed <- fmt.Errorf("writer %d: the index counts %d rows after writes of %d returned", w, got, before)
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	go func() { wg.Wait(); close(stop) }()
	for polling := true; polling; {
		select {
		case <-stop:
			polling = false
		default:
		}
		if err := idx.Refresh(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	close(failed)
	for err := range failed {
		t.Error(err)
	}
	if err := idx.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, want := indexTotal(t, idx), int64(len(apiOnly(written))); got != want {
		t.Fatalf("the index counts %d api rows, %d were written", got, want)
	}
	expectMatchesReference(t, "index", idx, normalized(written))
	expectMatchesReference(t, "raw", s, normalized(written))
}

// indexTotalCtx is indexTotal for a writer goroutine: -1 on an error.
func indexTotalCtx(idx *colindex.Index) int64 {
	var n int64
	for _, cat := range []string{"alpha", "beta"} {
		a, err := idx.Answer(context.Background(), analytics.Query{Cat: cat}, analytics.PartTotal)
		if err != nil {
			return -1
		}
		n += a.Total
	}
	return n
}
