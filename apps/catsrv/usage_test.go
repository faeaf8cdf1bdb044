package main

import (
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/core/analytics"
)

// TestUsageReadsOwnFeedback: with the column index as the warehouse,
// serve's usage counter is the index and its feedback recorder brings
// the index up to date, so a write and a feedback change of this process
// are counted as soon as they return, equal to the reference and to the
// database's own count; with the SQL warehouse both are the database.
// On SQLite and PostgreSQL.
func TestUsageReadsOwnFeedback(t *testing.T) {
	t.Parallel()
	for _, b := range sqltest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			store := sqltest.Open(t, b.DSN(t))
			if u, f, tk := usageDeps(store, store.Rollups()); u != store || f != store || tk != store {
				t.Fatalf("the SQL warehouse counts usage with %T, records feedback with %T and sums tokens with %T", u, f, tk)
			}
			rollups, err := warehouse(ctx, "index", time.Hour, store, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
			if err != nil {
				t.Fatal(err)
			}
			usage, feedback, tokens := usageDeps(store, rollups)
			if _, ok := usage.(*colindex.Index); !ok {
				t.Fatalf("the index warehouse counts usage with %T", usage)
			}
			if _, ok := tokens.(colindex.Tokens); !ok {
				t.Fatalf("the index warehouse sums budget tokens with %T", tokens)
			}
			at := time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)
			var rows []analytics.Interaction
			for k, model := range []string{"m1", "m2", "m1"} {
				rows = append(rows, analytics.Interaction{
					Time: at.Add(time.Duration(k) * time.Hour), Cat: "demo", EventKind: analytics.EventKindAPI,
					Topic: "billing", Model: model, Persona: "p", Question: "q?", Answer: "a.",
					InteractionID: "msg-" + model + "-" + string(rune('a'+k)), UserID: "u", ConversationID: "c",
					Usage: analytics.Usage{InputTokens: int64(100 * (k + 1)), OutputTokens: 7, CostUSD: 0.25, LatencyMS: analytics.MS(float64(300 * (k + 1)))},
				})
			}
			if _, err := store.Append(ctx, analytics.Each(rows)); err != nil {
				t.Fatal(err)
			}
			check := func(when string) {
				t.Helper()
				var ref []analytics.Interaction
				for _, i := range rows {
					ref = append(ref, i.Normalize())
				}
				for _, g := range []analytics.GroupBy{analytics.GroupNone, analytics.GroupModel, analytics.GroupDay} {
					q := analytics.UsageQuery{Cat: "demo", GroupBy: g}
					want := sortedUsage(analytics.CountUsage(ref, q))
					got, err := usage.CountUsage(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					sql, err := store.CountUsage(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					if got, sql = sortedUsage(got), sortedUsage(sql); got.Total != want.Total || !slices.Equal(got.Groups, want.Groups) ||
						sql.Total != want.Total || !slices.Equal(sql.Groups, want.Groups) {
						t.Fatalf("%s, group %v:\nindex %+v\n  sql %+v\n want %+v", when, g, got, sql, want)
					}
				}
			}
			check("after the append")
			var wantTokens int64
			for _, i := range rows {
				wantTokens += i.Usage.InputTokens + i.Usage.OutputTokens
			}
			if got, err := tokens.TokensSince(ctx, "demo", "", at.Truncate(24*time.Hour)); err != nil || got != wantTokens {
				t.Fatalf("tokens of the day: %d, %v; want %d", got, err, wantTokens)
			}
			for k, rating := range []string{analytics.RatingUp, analytics.RatingDown, analytics.RatingUp} {
				if err := feedback.SetFeedback(ctx, "demo", rows[k].InteractionID, analytics.Feedback{Rating: rating}); err != nil {
					t.Fatal(err)
				}
				rows[k].Feedback = analytics.Feedback{Rating: rating}
				check("after rating " + rows[k].InteractionID)
			}
			if err := feedback.SetFeedback(ctx, "demo", rows[1].InteractionID, analytics.Feedback{}); err != nil {
				t.Fatal(err)
			}
			rows[1].Feedback = analytics.Feedback{}
			check("after removing a rating")
		})
	}
}

func sortedUsage(c analytics.UsageCounts) analytics.UsageCounts {
	c.Groups = slices.Clone(c.Groups)
	slices.SortFunc(c.Groups, func(a, b analytics.UsageGroup) int { return strings.Compare(a.Key, b.Key) })
	return c
}
