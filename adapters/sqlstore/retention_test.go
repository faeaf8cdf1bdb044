package sqlstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/retention"
	"github.com/catsrv/catsrv/ports"
)

// retentionCats configures alpha to keep one day of interactions and beta
// to keep them forever.
func retentionCats() *memstore.Cats {
	alpha, beta := catconfig.Defaults("alpha"), catconfig.Defaults("beta")
	alpha.Analytics.RetentionDays = 1
	return memstore.NewCats(alpha, beta)
}

// TestRetentionAcrossDayBoundary runs the retention job with a fixed clock
// over three days of interactions: nothing goes until the clock crosses
// UTC midnight, then alpha's oldest day goes, the next midnight the next
// one, and beta keeps everything. After each pass the raw log, the
// rollups and the column index answer as the reference over what remains.
func TestRetentionAcrossDayBoundary(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			s := openStore(t, b.DSN(t))
			idx, err := colindex.Build(t.Context(), s)
			if err != nil {
				t.Fatal(err)
			}
			in := sampleLog(400, 0) // three days from day0, alpha and beta
			mustAppend(t, s, in)
			if err := idx.Refresh(t.Context()); err != nil {
				t.Fatal(err)
			}
			ref := normalized(in)
			clk := clock.NewFixed(day0.Add(48*time.Hour - time.Microsecond))
			p := retention.New(retention.Deps{
				Cats: retentionCats(), Interactions: colindex.Eraser{InteractionEraser: s, Index: idx},
				Lock: s, Clock: clk, Batch: 25,
			})
			reads := map[string]ports.Aggregator{"raw": s, "rollups": s.Rollups(), "index": idx}
			pass := func(wantDeleted int) {
				t.Helper()
				r, err := p.Pass(t.Context())
				if err != nil || r.Skipped || r.Interactions != wantDeleted {
					t.Fatalf("at %s: Pass = %+v, %v; want %d deleted", clk.Now(), r, err, wantDeleted)
				}
				ref = slices.DeleteFunc(ref, analytics.Deletion{Cat: "alpha", Before: retention.InteractionCut(clk.Now(), 1)}.Selects)
				checkReads(t, reads, ref)
			}
			count := func(before time.Time) int {
				n := 0
				for _, i := range ref {
					if i.Cat == "alpha" && i.Time.Before(before) {
						n++
					}
				}
				return n
			}
			pass(0) // the last microsecond of day 1: alpha keeps day 0 and day 1
			clk.Advance(time.Microsecond)
			pass(count(day0.Add(24 * time.Hour))) // day 2 begins: day 0 goes
			clk.Advance(24 * time.Hour)
			pass(count(day0.Add(48 * time.Hour))) // day 3 begins: day 1 goes
			pass(0)
			for _, i := range ref {
				if i.Cat == "alpha" && i.Time.Before(day0.Add(48*time.Hour)) {
					t.Fatalf("alpha keeps %s", i.Time)
				}
			}
		})
	}
}

// checkReads compares every read with the reference, whole and per day.
func checkReads(t *testing.T, reads map[string]ports.Aggregator, ref []analytics.Interaction) {
	t.Helper()
	var queries []analytics.Query
	for _, cat := range []string{"alpha", "beta"} {
		queries = append(queries, analytics.Query{Cat: cat}, analytics.Query{Cat: cat, Limit: 2})
		for d := range 3 {
			start := day0.AddDate(0, 0, d)
			queries = append(queries, analytics.Query{Cat: cat, Range: analytics.Range{Start: start, End: start.AddDate(0, 0, 1)}})
		}
	}
	for name, read := range reads {
		for _, q := range queries {
			got, err := read.Answer(t.Context(), q, analytics.AllParts)
			if err != nil {
				t.Fatalf("%s: Answer(%+v): %v", name, q, err)
			}
			want := analytics.CountAnswer(ref, q, analytics.AllParts)
			if got.Total != want.Total {
				t.Fatalf("%s: Answer(%+v): total %d, reference %d", name, q, got.Total, want.Total)
			}
			for _, d := range analytics.Dimensions {
				g, w := slices.Clone(got.Groups[d]), slices.Clone(want.Groups[d])
				if q.LimitOf(d) == 0 {
					analytics.SortGroups(g)
					analytics.SortGroups(w)
				}
				if !slices.Equal(g, w) {
					t.Fatalf("%s: Answer(%+v), list %v:\n got       %v\n reference %v", name, q, d, g, w)
				}
			}
		}
	}
}

// blockingEraser stops in its first deletion until told to go on.
type blockingEraser struct {
	ports.InteractionEraser
	entered, proceed chan struct{}
}

func (e *blockingEraser) DeleteInteractions(ctx context.Context, d analytics.Deletion, batch int) (int, error) {
	if e.entered != nil {
		close(e.entered)
		e.entered = nil
		<-e.proceed
	}
	return e.InteractionEraser.DeleteInteractions(ctx, d, batch)
}

// TestRetentionOnePassAtATime runs two pruners, as two instances would,
// on one database (two stores on the same PostgreSQL schema; one store on
// SQLite): while one is inside a pass, the other's pass is skipped; once
// it ends, the other runs.
func TestRetentionOnePassAtATime(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			dsn := b.DSN(t)
			sa := openStore(t, dsn)
			sb := sa
			if b.Name == "PostgreSQL" {
				sb = openStore(t, dsn)
			}
			mustAppend(t, sa, sampleLog(100, 0))
			clk := clock.NewFixed(day0.Add(72 * time.Hour))
			slow := &blockingEraser{InteractionEraser: sa, entered: make(chan struct{}), proceed: make(chan struct{})}
			entered := slow.entered
			pa := retention.New(retention.Deps{Cats: retentionCats(), Interactions: slow, Lock: sa, Clock: clk})
			pb := retention.New(retention.Deps{Cats: retentionCats(), Interactions: sb, Lock: sb, Clock: clk})
			type outcome struct {
				r   retention.Report
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				r, err := pa.Pass(context.WithoutCancel(t.Context()))
				done <- outcome{r, err}
			}()
			<-entered
			r, err := pb.Pass(t.Context())
			if err != nil || !r.Skipped {
				t.Errorf("second pruner during the first's pass: %+v, %v; want skipped", r, err)
			}
			close(slow.proceed)
			first := <-done
			if first.err != nil || first.r.Skipped || first.r.Interactions == 0 {
				t.Fatalf("first pruner: %+v, %v; want deletions", first.r, first.err)
			}
			r, err = pb.Pass(t.Context())
			if err != nil || r.Skipped || r.Interactions != 0 {
				t.Errorf("second pruner after the first's pass: %+v, %v; want a pass with nothing left to delete", r, err)
			}
		})
	}
}

var _ ports.JobLock = (*sqlstore.Store)(nil)
