package colindex_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

// TestUsageContractSQL holds the index to the usage contract over the SQL
// store on both databases, wired as the service wires it: commits handed
// over by TellCommits, feedback through colindex.Feedback and erasures
// through colindex.Eraser.
func TestUsageContractSQL(t *testing.T) {
	for _, b := range sqltest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			porttest.TestUsage(t, func(t *testing.T) porttest.UsageStore {
				s := sqltest.Open(t, b.DSN(t))
				idx := build(t, s)
				s.TellCommits(idx.Hold)
				t.Cleanup(func() { s.TellCommits(nil) })
				return porttest.UsageStore{
					Log:      s,
					Feedback: colindex.Feedback{FeedbackRecorder: s, Index: idx},
					Counts:   map[string]ports.UsageCounter{"sql": s, "index": idx},
					Eraser:   colindex.Eraser{InteractionEraser: s, Index: idx},
				}
			})
		})
	}
}

// TestUsageSnapshotSQL starts the index from the store's snapshot of
// rated rows (the snapshot carries no ratings: they are read by its
// position), then changes ratings and appends, comparing with the
// store's own counts each time. On both databases.
func TestUsageSnapshotSQL(t *testing.T) {
	for _, b := range sqltest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			r := rand.New(rand.NewPCG(5, 6))
			s := sqltest.Open(t, b.DSN(t))
			ids := 0
			var rows []analytics.Interaction
			appendRows := func(n int) {
				more := usageRows(r, n, &ids)
				for k := range more {
					// Costs a database sums without overflow (still past 32 bits).
					more[k].Usage.CostUSD = min(more[k].Usage.CostUSD, 3)
				}
				if _, err := s.Append(ctx, analytics.Each(more)); err != nil {
					t.Fatal(err)
				}
				for _, i := range more {
					rows = append(rows, i.Normalize())
				}
			}
			rate := func(n int) {
				for range n {
					i := rows[r.IntN(len(rows))]
					if err := s.SetFeedback(ctx, i.Cat, i.InteractionID, randomFeedback(r)); err != nil {
						t.Fatal(err)
					}
				}
			}
			check := func(when string, idx *colindex.Index) {
				t.Helper()
				for range 40 {
					q := usageQuery(r, rows)
					want, err := s.CountUsage(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					got, err := idx.CountUsage(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					if got, want = sortedCounts(got), sortedCounts(want); got.Total != want.Total || !slices.Equal(got.Groups, want.Groups) {
						t.Fatalf("%s: CountUsage(%+v)\nindex %+v\n  sql %+v", when, q, got, want)
					}
				}
			}
			appendRows(400)
			rate(40)
			idx := build(t, s)
			check("after the snapshot start", idx)
			rate(20)
			appendRows(100)
			if err := idx.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			check("after rating changes and appends", idx)
		})
	}
}

// TestTokensContractSQL holds colindex.Tokens to the token contract over
// the SQL store on both databases, wired as the service wires it, and
// checks that a CAT's tokens since a UTC day's start come from the index,
// not the store.
func TestTokensContractSQL(t *testing.T) {
	for _, b := range sqltest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			porttest.TestTokenUsage(t, func(t *testing.T) (ports.InteractionLog, ports.TokenUsage) {
				s := sqltest.Open(t, b.DSN(t))
				idx := build(t, s)
				s.TellCommits(idx.Hold)
				t.Cleanup(func() { s.TellCommits(nil) })
				return s, colindex.Tokens{TokenUsage: storeTokens{t: t, TokenUsage: s}, Index: idx}
			})
		})
	}
}

// storeTokens is the store's token counter, failing the test when asked
// what the index answers.
type storeTokens struct {
	t *testing.T
	ports.TokenUsage
}

func (s storeTokens) TokensSince(ctx context.Context, cat, userID string, since time.Time) (int64, error) {
	if userID == "" && since.Equal(since.Truncate(24*time.Hour)) {
		s.t.Errorf("TokensSince(%s, %s) asked of the store", cat, since)
	}
	return s.TokenUsage.TokensSince(ctx, cat, userID, since)
}
