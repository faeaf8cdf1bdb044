package colindex_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

// TestUsageContract holds the index to the usage contract over the
// in-memory reference: appends refresh the index, feedback goes through
// colindex.Feedback and erasures through colindex.Eraser.
func TestUsageContract(t *testing.T) {
	porttest.TestUsage(t, func(t *testing.T) porttest.UsageStore {
		m := newMemLog()
		idx := build(t, m)
		return porttest.UsageStore{
			Log:      refreshingLog{InteractionLog: m, Index: idx},
			Feedback: colindex.Feedback{FeedbackRecorder: m, Index: idx},
			Counts:   map[string]ports.UsageCounter{"memory": m, "index": idx},
			Eraser:   colindex.Eraser{InteractionEraser: m, Index: idx},
		}
	})
}

// snapLog is a memLog with a snapshot of every stored row, followed from
// the position after: the rows above it are given again by the feed, as
// when writers committed out of order. Its rows carry no rating, as a
// store's snapshot.
type snapLog struct {
	*memLog
	after int64
}

func (s snapLog) ReadSnapshot(_ context.Context, fn func(*analytics.FeedRow) error) (int64, map[int64]string, error) {
	s.mu.Lock()
	rows, gone := slices.Clone(s.rows), slices.Clone(s.gone)
	s.mu.Unlock()
	given := map[int64]string{}
	for k, i := range rows {
		if gone[k] || !i.Counted() {
			continue
		}
		r := feedRow(0, i)
		r.Rating = analytics.RatingCodeNone
		if err := fn(&r); err != nil {
			return 0, nil, err
		}
		if int64(k+1) > s.after {
			given[int64(k+1)] = i.Cat
		}
	}
	return s.after, given, nil
}

// usageRows returns n api interactions over ten days in random order, in
// three CATs, with random usage (some values needing 8 bytes) and
// ratings.
func usageRows(r *rand.Rand, n int, ids *int) []analytics.Interaction {
	start := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	out := make([]analytics.Interaction, n)
	for k := range out {
		*ids++
		q, a := r.IntN(12), r.IntN(6)
		i := analytics.Interaction{
			Time:      start.Add(time.Duration(r.Int64N(int64(10 * 24 * time.Hour)))).Truncate(time.Microsecond),
			Cat:       pickOf(r, "a", "b", "c"),
			EventKind: analytics.EventKindAPI, InteractionID: fmt.Sprintf("id-%d", *ids),
			Topic: pickOf(r, "t1", "t2", "t3"), Model: pickOf(r, "m1", "m2", "m3"), Persona: pickOf(r, "p1", "p2"),
			QuestionID: fmt.Sprintf("q%d", q), Question: fmt.Sprintf("question %d", q),
			AnswerID: fmt.Sprintf("a%d", a), Answer: fmt.Sprintf("answer %d", a),
			UserID: pickOf(r, "u1", "u2", "u3"), ConversationID: "conv",
		}
		if r.IntN(5) > 0 {
			i.Usage.InputTokens = pickOf(r, 0, 7, 300, 70000, r.Int64N(5000), 1<<33)
			i.Usage.OutputTokens = pickOf(r, 0, 1, 200, r.Int64N(3000))
		}
		if r.IntN(2) == 0 {
			i.Usage.CostUSD = pickOf(r, 0.000001, 0.5, 3.0, 9e9, float64(r.IntN(1e6))/1e7)
		}
		if r.IntN(4) > 0 {
			i.Usage.LatencyMS = analytics.MS(pickOf(r, 0, 0.0005, 1, 99.5, 250, 1e4, 2e9, r.Float64()*5000))
			if i.Cat == "c" { // no fast latency: the CAT's histograms start above bucket 0
				i.Usage.LatencyMS = analytics.MS(pickOf(r, 99.5, 250, 1e4, 2e9, 50+r.Float64()*5000))
			}
		}
		i.Feedback = randomFeedback(r)
		out[k] = i
	}
	return out
}

func pickOf[T any](r *rand.Rand, vals ...T) T { return vals[r.IntN(len(vals))] }

func randomFeedback(r *rand.Rand) analytics.Feedback {
	switch r.IntN(3) {
	case 0:
		return analytics.Feedback{Rating: analytics.RatingUp}
	case 1:
		return analytics.Feedback{Rating: analytics.RatingDown}
	}
	return analytics.Feedback{}
}

// usageQuery returns a random query over the rows: any grouping, filters
// on every dimension (values of the rows, sometimes one they lack), whole
// or mid-day ranges, open or not.
func usageQuery(r *rand.Rand, rows []analytics.Interaction) analytics.UsageQuery {
	q := analytics.UsageQuery{Cat: pickOf(r, "a", "b", "c", "none"), GroupBy: analytics.GroupBy(r.IntN(5))}
	if len(rows) == 0 {
		return q
	}
	at := func() time.Time {
		t := rows[r.IntN(len(rows))].Time
		if r.IntN(2) == 0 {
			return t.Truncate(24 * time.Hour)
		}
		return t.Add(time.Duration(r.IntN(3)-1) * time.Microsecond)
	}
	switch r.IntN(4) {
	case 1:
		q.Range.Start = at()
	case 2:
		q.Range.End = at()
	case 3:
		q.Range.Start, q.Range.End = at(), at()
		if q.Range.End.Before(q.Range.Start) {
			q.Range.Start, q.Range.End = q.Range.End, q.Range.Start
		}
		q.Range.End = q.Range.End.Add(time.Duration(r.IntN(2)) * 24 * time.Hour)
	}
	values := func(key func(analytics.Interaction) string) []string {
		if r.IntN(3) > 0 {
			return nil
		}
		var out []string
		for range 1 + r.IntN(2) {
			out = append(out, key(rows[r.IntN(len(rows))]))
		}
		if r.IntN(6) == 0 {
			out = append(out, "missing")
		}
		return out
	}
	q.Filters = analytics.Filters{
		Models:      values(func(i analytics.Interaction) string { return i.Model }),
		Personas:    values(func(i analytics.Interaction) string { return i.Persona }),
		Topics:      values(func(i analytics.Interaction) string { return i.Topic }),
		QuestionIDs: values(func(i analytics.Interaction) string { return i.QuestionID }),
		AnswerIDs:   values(func(i analytics.Interaction) string { return i.AnswerID }),
	}
	return q
}

// checkUsage compares the index's usage with the reference's over random
// queries.
func checkUsage(t *testing.T, when string, r *rand.Rand, idx *colindex.Index, m *memLog) {
	t.Helper()
	rows := m.stored()
	for k := range 80 {
		if k == 60 {
			idx.MarkUnsorted() // the rest check each row's time
		}
		q := usageQuery(r, rows)
		want := sortedCounts(analytics.CountUsage(rows, q))
		got, err := idx.CountUsage(t.Context(), q)
		if err != nil {
			t.Fatalf("%s: CountUsage: %v", when, err)
		}
		if got = sortedCounts(got); got.Total != want.Total || !slices.Equal(got.Groups, want.Groups) {
			t.Fatalf("%s: CountUsage(%+v)\n got %+v\nwant %+v", when, q, got, want)
		}
		q.RatingsOnly = true
		only, err := idx.CountUsage(t.Context(), q)
		if err != nil {
			t.Fatalf("%s: CountUsage: %v", when, err)
		}
		if g, w := ratingsOf(only), ratingsOf(want); !maps.Equal(g, w) {
			t.Fatalf("%s: CountUsage(%+v) ratings\n got %v\nwant %v", when, q, g, w)
		}
	}
}

// ratingsOf returns the ups and downs of the total (key "") and of each
// group with a rating (keys prefixed "g:").
func ratingsOf(c analytics.UsageCounts) map[string][2]int64 {
	out := map[string][2]int64{"": {c.Total.Up, c.Total.Down}}
	for _, g := range c.Groups {
		if g.Up+g.Down > 0 {
			out["g:"+g.Key] = [2]int64{g.Up, g.Down}
		}
	}
	return out
}

func sortedCounts(c analytics.UsageCounts) analytics.UsageCounts {
	c.Groups = slices.Clone(c.Groups)
	slices.SortFunc(c.Groups, func(a, b analytics.UsageGroup) int { return strings.Compare(a.Key, b.Key) })
	return c
}

// TestUsageProperty starts the index from a snapshot whose last rows the
// feed gives again (rated ones counted once), then changes ratings (of
// given rows too), appends late rows and deletes, comparing CountUsage
// with the reference after each step.
func TestUsageProperty(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 3
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 77))
			ctx := t.Context()
			m := newMemLog()
			ids := 0
			if _, err := m.Append(ctx, analytics.Each(usageRows(r, 300+r.IntN(300), &ids))); err != nil {
				t.Fatal(err)
			}
			stored := int64(len(m.stored()))
			idx := build(t, snapLog{memLog: m, after: r.Int64N(stored + 1)})
			checkUsage(t, "after the snapshot start", r, idx, m)

			rate := func(n int) {
				rows := m.stored()
				for range n {
					i := rows[r.IntN(len(rows))]
					if err := m.SetFeedback(ctx, i.Cat, i.InteractionID, randomFeedback(r)); err != nil {
						t.Fatal(err)
					}
				}
			}
			for round := range 3 {
				rate(1 + r.IntN(20))
				if err := idx.Refresh(ctx); err != nil {
					t.Fatal(err)
				}
				checkUsage(t, fmt.Sprintf("round %d: after rating changes", round), r, idx, m)
				if _, err := m.Append(ctx, analytics.Each(usageRows(r, 1+r.IntN(200), &ids))); err != nil {
					t.Fatal(err)
				}
				rate(r.IntN(5)) // some before the refresh reads the new rows
				if err := idx.Refresh(ctx); err != nil {
					t.Fatal(err)
				}
				checkUsage(t, fmt.Sprintf("round %d: after late rows", round), r, idx, m)
				d := analytics.Deletion{UserID: pickOf(r, "u1", "u2", "u3")}
				eraser := colindex.Eraser{InteractionEraser: m, Index: idx}
				if _, err := eraser.DeleteInteractions(ctx, d, 0); err != nil {
					t.Fatal(err)
				}
				checkUsage(t, fmt.Sprintf("round %d: after deleting %s", round, d.UserID), r, idx, m)
				// Rows this process wrote, handed over before the feed
				// gives them: their ratings count at once, and once.
				written := usageRows(r, 1+r.IntN(50), &ids)
				if _, err := m.Append(ctx, analytics.Each(written)); err != nil {
					t.Fatal(err)
				}
				held, givenAt := committedOf(m, written)
				idx.Hold(held, givenAt, true)
				checkUsage(t, fmt.Sprintf("round %d: after Hold", round), r, idx, m)
				if r.IntN(2) == 0 {
					if err := idx.Refresh(ctx); err != nil {
						t.Fatal(err)
					}
					checkUsage(t, fmt.Sprintf("round %d: after the feed gave the held rows", round), r, idx, m)
				}
			}
		})
	}
}

// TestUsageParallel checks counts split over the cores (a CAT of more
// than two parts' rows) against the reference, and counts during
// refreshes that add rows and change ratings (for the race detector).
func TestUsageParallel(t *testing.T) {
	if testing.Short() {
		t.Skip("140k rows")
	}
	ctx := t.Context()
	r := rand.New(rand.NewPCG(9, 10))
	m := newMemLog()
	ids := 0
	rows := usageRows(r, 140_000, &ids)
	for k := range rows {
		rows[k].Cat = "a"
	}
	if _, err := m.Append(ctx, analytics.Each(rows)); err != nil {
		t.Fatal(err)
	}
	idx := build(t, m)
	stored := m.stored()
	for range 15 {
		q := usageQuery(r, stored)
		q.Cat = "a"
		want := sortedCounts(analytics.CountUsage(stored, q))
		got, err := idx.CountUsage(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if got = sortedCounts(got); got.Total != want.Total || !slices.Equal(got.Groups, want.Groups) {
			t.Fatalf("CountUsage(%+v)\n got %+v\nwant %+v", q, got, want)
		}
	}
	done := make(chan error)
	go func() {
		w := rand.New(rand.NewPCG(11, 12))
		for range 5 {
			more := usageRows(w, 500, &ids)
			if _, err := m.Append(ctx, analytics.Each(more)); err != nil {
				done <- err
				return
			}
			i := stored[w.IntN(len(stored))]
			if err := m.SetFeedback(ctx, i.Cat, i.InteractionID, randomFeedback(w)); err != nil {
				done <- err
				return
			}
			if err := idx.Refresh(ctx); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		default:
		}
		q := usageQuery(r, stored)
		got, err := idx.CountUsage(ctx, q)
		if err != nil || got.Total.Up+got.Total.Down > got.Total.Interactions {
			t.Fatalf("CountUsage(%+v) during refreshes: %+v, %v", q, got.Total, err)
		}
	}
}
