package sqlstore_test

import (
	"slices"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

// TestEraserContract runs the deletion contract on both databases: after
// every batch the raw log, the rollups and a column index following the
// database (through its deletion feed) answer as the reference over the
// rows that remain.
func TestEraserContract(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			if b.Name == "PostgreSQL" {
				serverDSN(t)
			}
			porttest.TestInteractionEraser(t, func(t *testing.T) porttest.Erasable {
				s := openStore(t, b.DSN(t))
				idx, err := colindex.Build(t.Context(), s)
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				return porttest.Erasable{
					Log: s, Eraser: s,
					Reads:        map[string]ports.Aggregator{"raw": s, "rollups": s.Rollups(), "index": idx},
					Sync:         idx.Refresh,
					OnBatch:      s.SetAfterDeleteBatch,
					DefaultBatch: sqlstore.DefaultDeleteBatch,
					Browser:      s,
				}
			})
		})
	}
}

// TestDeleteCollectsDictionaries checks that an erasure leaves no text of
// the erased rows in the dictionaries, while entries other rows still use
// stay, across CATs and batches.
func TestDeleteCollectsDictionaries(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			s := openStore(t, b.DSN(t))
			at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
			row := func(user, cat, topic, question string) analytics.Interaction {
				return analytics.Interaction{Time: at, Cat: cat, EventKind: analytics.EventKindAPI, UserID: user,
					Topic: topic, Model: "m", Persona: "p", Question: question, Answer: "shared answer"}
			}
			mustAppend(t, s, []analytics.Interaction{
				row("u1", "alpha", "private topic", "my secret question"),
				row("u1", "alpha", "t", "shared question"),
				row("u1", "alpha", "t", "second secret"),
				row("u2", "alpha", "t", "shared question"),
				row("u2", "beta", "t", "my secret question"), // the same text in another CAT
			})
			if n, err := s.DeleteInteractions(t.Context(), analytics.Deletion{UserID: "u1"}, 2); err != nil || n != 3 {
				t.Fatalf("DeleteInteractions = %d, %v; want 3", n, err)
			}
			texts := func(table, cat string) []string {
				var out []string
				if err := s.DB().NewSelect().TableExpr(table).Column("item_text").Where("cat = ?", cat).
					OrderExpr("item_text").Scan(t.Context(), &out); err != nil {
					t.Fatal(err)
				}
				return out
			}
			if got := texts("question_dict", "alpha"); !slices.Equal(got, []string{"shared question"}) {
				t.Errorf("alpha's questions %q, want only the one u2 still asked", got)
			}
			if got := texts("topic_dict", "alpha"); !slices.Equal(got, []string{"t"}) {
				t.Errorf("alpha's topics %q, want [t]", got)
			}
			if got := texts("answer_dict", "alpha"); !slices.Equal(got, []string{"shared answer"}) {
				t.Errorf("alpha's answers %q", got)
			}
			if got := texts("question_dict", "beta"); !slices.Equal(got, []string{"my secret question"}) {
				t.Errorf("beta's questions %q: another CAT's entry went", got)
			}
			// A later append of an erased text gets an entry again.
			mustAppend(t, s, []analytics.Interaction{row("u3", "alpha", "t", "my secret question")})
			c, err := s.Answer(t.Context(), analytics.Query{Cat: "alpha"}, analytics.ListOf(analytics.Question))
			if err != nil || len(c.Groups[analytics.Question]) != 2 {
				t.Errorf("questions after a new append: %v, %v", c.Groups[analytics.Question], err)
			}
		})
	}
}

// TestCachedCodesAfterAnotherInstanceCollects checks that an instance's
// cached dictionary codes are dropped when another instance sharing the
// database collects their entries: the first appends a text (caching its
// code), the second erases the only row using it (deleting the entry),
// and the first's next append of the text must store it again, not point
// at the deleted entry. Appends and chat turns (WriteTx with AppendTx,
// which reads the counter as it begins on PostgreSQL) both cache codes.
func TestCachedCodesAfterAnotherInstanceCollects(t *testing.T) {
	t.Parallel() // own stores only
	ways := map[string]func(*testing.T, *sqlstore.Store, []analytics.Interaction){"append": mustAppend, "turn": turn}
	for _, b := range backends {
		for way, write := range ways {
			t.Run(b.Name+"/"+way, func(t *testing.T) {
				dsn := b.DSN(t)
				first, second := openStore(t, dsn), openStore(t, dsn)
				row := func(user string) analytics.Interaction {
					return analytics.Interaction{Time: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), Cat: "alpha",
						EventKind: analytics.EventKindAPI, UserID: user, Topic: "t", Model: "m", Persona: "p",
						Question: "collected question", Answer: "a"}
				}
				write(t, first, []analytics.Interaction{row("u1")})
				if n, err := second.DeleteInteractions(t.Context(), analytics.Deletion{UserID: "u1"}, 0); err != nil || n != 1 {
					t.Fatalf("DeleteInteractions = %d, %v; want 1", n, err)
				}
				write(t, first, []analytics.Interaction{row("u2")})
				for _, s := range []*sqlstore.Store{first, second} {
					c, err := s.Answer(t.Context(), analytics.Query{Cat: "alpha"}, analytics.ListOf(analytics.Question))
					if err != nil || len(c.Groups[analytics.Question]) != 1 || c.Groups[analytics.Question][0].Text != "collected question" {
						t.Errorf("questions after the new append: %+v, %v", c.Groups[analytics.Question], err)
					}
				}
			})
		}
	}
}

// TestDeleteNewestKeepsIDs deletes the newest rows and appends again: the
// new rows must get ids above every id a follower has seen (SQLite would
// hand the highest id out again), so an index following the ids reads
// them.
func TestDeleteNewestKeepsIDs(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			s := openStore(t, b.DSN(t))
			at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
			row := func(user string) analytics.Interaction {
				return analytics.Interaction{Time: at, Cat: "alpha", EventKind: analytics.EventKindAPI, UserID: user,
					Topic: "t", Model: "m", Persona: "p", Question: "q " + user, Answer: "a"}
			}
			idx, err := colindex.Build(t.Context(), s)
			if err != nil {
				t.Fatal(err)
			}
			for round := range 3 {
				mustAppend(t, s, []analytics.Interaction{row("keep"), row("gone"), row("gone")})
				if err := idx.Refresh(t.Context()); err != nil {
					t.Fatal(err)
				}
				if n, err := s.DeleteInteractions(t.Context(), analytics.Deletion{UserID: "gone"}, 0); err != nil || n != 2 {
					t.Fatalf("DeleteInteractions = %d, %v; want 2", n, err)
				}
				if err := idx.Refresh(t.Context()); err != nil { // the index learns of the deletion
					t.Fatal(err)
				}
				mustAppend(t, s, []analytics.Interaction{row("late")})
				if err := idx.Refresh(t.Context()); err != nil {
					t.Fatal(err)
				}
				want := int64(2 * (round + 1))
				for name, read := range map[string]ports.Aggregator{"raw": s, "index": idx} {
					c, err := read.Answer(t.Context(), analytics.Query{Cat: "alpha"}, analytics.PartTotal)
					if err != nil || c.Total != want {
						t.Errorf("round %d, %s: total %d, %v; want %d", round, name, c.Total, err, want)
					}
				}
			}
		})
	}
}

func TestDeletionFeedContract(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			porttest.TestDeletionFeed(t, func(t *testing.T) porttest.DeletionFeedStore { return openStore(t, b.DSN(t)) })
		})
	}
}

// TestFollowerUnderConcurrentDeletes has one store append, another delete
// (by user, by CAT and time) and an index over a third follow both at
// once, as three instances on one database would; once all are done and
// the index has refreshed, it answers as the raw log.
func TestFollowerUnderConcurrentDeletes(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			dsn := b.DSN(t)
			writer, deleter, follower := openStore(t, dsn), openStore(t, dsn), openStore(t, dsn)
			idx, err := colindex.Build(t.Context(), follower)
			if err != nil {
				t.Fatal(err)
			}
			in := sampleLog(600, 3)
			for k := range in {
				in[k].UserID = []string{"u1", "u2", "u3"}[k%3]
			}
			done := make(chan struct{})
			errc := make(chan error, 3)
			go func() {
				defer close(done)
				for start := 0; start < len(in); start += 30 {
					if _, err := writer.Append(t.Context(), analytics.Each(in[start:start+30])); err != nil {
						errc <- err
						return
					}
				}
			}()
			go func() {
				for k := range 12 {
					d := analytics.Deletion{UserID: []string{"u1", "u2"}[k%2]}
					if k%3 == 2 {
						d = analytics.Deletion{Cat: "alpha", Before: day0.Add(time.Duration(k) * 6 * time.Hour)}
					}
					if _, err := deleter.DeleteInteractions(t.Context(), d, 7); err != nil {
						errc <- err
						return
					}
				}
				errc <- nil
			}()
			go func() {
				for {
					select {
					case <-done:
						errc <- nil
						return
					default:
					}
					if err := idx.Refresh(t.Context()); err != nil {
						errc <- err
						return
					}
				}
			}()
			for range 2 {
				if err := <-errc; err != nil {
					t.Fatal(err)
				}
			}
			<-done
			if err := idx.Refresh(t.Context()); err != nil {
				t.Fatal(err)
			}
			for _, cat := range []string{"alpha", "beta"} {
				for _, q := range []analytics.Query{{Cat: cat}, {Cat: cat, Range: analytics.Range{Start: day0.AddDate(0, 0, 1), End: day0.AddDate(0, 0, 2)}}} {
					raw, err := writer.Answer(t.Context(), q, analytics.AllParts)
					if err != nil {
						t.Fatal(err)
					}
					got, err := idx.Answer(t.Context(), q, analytics.AllParts)
					if err != nil {
						t.Fatal(err)
					}
					if got.Total != raw.Total {
						t.Fatalf("%+v: index total %d, raw %d", q, got.Total, raw.Total)
					}
					for _, d := range analytics.Dimensions {
						g, w := slices.Clone(got.Groups[d]), slices.Clone(raw.Groups[d])
						analytics.SortGroups(g)
						analytics.SortGroups(w)
						if !slices.Equal(g, w) {
							t.Fatalf("%+v, %v: index %v, raw %v", q, d, g, w)
						}
					}
				}
			}
		})
	}
}
