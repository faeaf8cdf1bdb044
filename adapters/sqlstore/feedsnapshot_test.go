package sqlstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports/porttest"
)

// feedOnly hides the store's colindex.Snapshot: an index built over it
// reads the whole feed, the way it started before snapshots.
type feedOnly struct {
	colindex.Feed
	colindex.Deletions
}

func buildIndex(t *testing.T, src colindex.Feed) *colindex.Index {
	t.Helper()
	idx, err := colindex.Build(t.Context(), src)
	if err != nil {
		t.Fatalf("colindex.Build: %v", err)
	}
	return idx
}

func refresh(t *testing.T, idx *colindex.Index) {
	t.Helper()
	if err := idx.Refresh(t.Context()); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
}

// without returns the interactions d does not select.
func without(in []analytics.Interaction, d analytics.Deletion) []analytics.Interaction {
	var out []analytics.Interaction
	for _, i := range in {
		if !d.Selects(i) {
			out = append(out, i)
		}
	}
	return out
}

// TestIndexFromSnapshot: an index started from the store's snapshot
// (dims_blocks and the dictionaries) counts exactly the reference, as one
// built from the whole feed does, over api rows, other event kinds and
// rows deleted before the start; and both follow rows and deletions
// committed after it.
func TestIndexFromSnapshot(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			s := openStore(t, b.DSN(t))
			log := sampleLog(600, 11)
			for k := range log {
				log[k].UserID = fmt.Sprintf("user %d", k%5)
			}
			mustAppend(t, s, log[:400])
			gone := analytics.Deletion{UserID: "user 3"}
			if _, err := s.DeleteInteractions(t.Context(), gone, 7); err != nil {
				t.Fatal(err)
			}
			kept := without(log[:400], gone)

			rows := 0
			perCat, catRows := map[string]int{}, map[string]map[int]bool{}
			high, given, err := s.ReadSnapshot(t.Context(), func(r *analytics.FeedRow) error {
				rows++
				perCat[string(r.Cat)]++
				if catRows[string(r.Cat)] == nil {
					catRows[string(r.Cat)] = map[int]bool{}
				}
				catRows[string(r.Cat)][r.CatRows] = true
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := len(apiOnly(kept)); rows != want || len(given) != 0 || high <= 0 {
				t.Fatalf("ReadSnapshot gave %d rows, %d given again, position %d; want %d rows, none again, a position", rows, len(given), high, want)
			}
			// Every row tells its CAT's row count in the snapshot.
			for cat, n := range perCat {
				if got := catRows[cat]; len(got) != 1 || !got[n] {
					t.Errorf("CAT %s: %d rows, FeedRow.CatRows %v", cat, n, got)
				}
			}

			fromSnapshot := buildIndex(t, s)
			fromFeed := buildIndex(t, feedOnly{s, s})
			if got, want := statsRows(fromSnapshot), statsRows(fromFeed); got != want || got != rows {
				t.Fatalf("index rows: from the snapshot %d, from the feed %d, want %d", got, want, rows)
			}
			expectMatchesReference(t, "index from snapshot", fromSnapshot, normalized(kept))
			expectMatchesReference(t, "index from feed", fromFeed, normalized(kept))

			// Rows and deletions after the start reach both.
			mustAppend(t, s, log[400:])
			later := analytics.Deletion{Cat: "alpha", Before: day0.Add(36 * time.Hour)}
			if _, err := s.DeleteInteractions(t.Context(), later, 50); err != nil {
				t.Fatal(err)
			}
			kept = without(append(kept, log[400:]...), later)
			refresh(t, fromSnapshot)
			refresh(t, fromFeed)
			expectMatchesReference(t, "index from snapshot, later", fromSnapshot, normalized(kept))
			expectMatchesReference(t, "index from feed, later", fromFeed, normalized(kept))
			if got, want := statsRows(fromSnapshot), len(apiOnly(kept)); got != want {
				t.Errorf("index from snapshot holds %d rows after the later writes, want %d", got, want)
			}
		})
	}
}

func statsRows(idx *colindex.Index) int {
	rows, _ := idx.Stats()
	return rows
}

// TestIndexFromSnapshotWhileWritersRun: on PostgreSQL an index starts
// while a writer that began before later, committed ones is still open:
// the snapshot holds the later rows, the feed position is below them (the
// open writer's horizon), so the feed gives them again; the index counts
// each once, and the open writer's rows once it commits. A deletion of a
// CAT whose rows were given again rebuilds it without losing them.
func TestIndexFromSnapshotWhileWritersRun(t *testing.T) {
	t.Parallel() // own stores only
	s := openStore(t, sqltest.PostgresDSN(t))
	log := apiOnly(sampleLog(60, 3))
	for k := range 4 {
		log[k].Topic = fmt.Sprintf("held topic %d", k)
		log[k].Question = fmt.Sprintf("held question %d?", k)
		log[k].Answer = fmt.Sprintf("held answer %d.", k)
	}
	turn(t, s, log[20:30]) // the shared dictionary entries, committed
	open := holdTurn(t, s, log[0:4])
	open.waitInserted(t)
	turn(t, s, log[4:12])
	committed := append(append([]analytics.Interaction{}, log[20:30]...), log[4:12]...)

	_, given, err := s.ReadSnapshot(t.Context(), func(*analytics.FeedRow) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(given) != 8 {
		t.Fatalf("the snapshot gave %d rows again above the open writer's horizon, want the 8 committed after it began", len(given))
	}
	idx := buildIndex(t, s)
	if got := statsRows(idx); got != len(committed) {
		t.Fatalf("the index started with %d rows, want %d", got, len(committed))
	}
	expectMatchesReference(t, "index at start", idx, normalized(committed))
	refresh(t, idx) // the rows above the horizon are not given twice
	expectMatchesReference(t, "index, open writer", idx, normalized(committed))

	turn(t, s, log[12:16]) // waits in the feed for the open writer
	open.commit(t)
	committed = append(committed, log[12:16]...)
	committed = append(committed, log[0:4]...)
	refresh(t, idx)
	refresh(t, idx)
	if got := statsRows(idx); got != len(committed) {
		t.Errorf("the index holds %d rows, want %d", got, len(committed))
	}
	expectMatchesReference(t, "index, all committed", idx, normalized(committed))
	expectMatchesReference(t, "raw", s, normalized(committed))
}

// TestIndexFromSnapshotRebuildsGivenCat: a deletion the index applies
// while rows the snapshot held are still to come from the feed rebuilds
// their CAT up to the feed position (without them); they are counted
// when the feed gives them, and the other CAT's are not counted again.
func TestIndexFromSnapshotRebuildsGivenCat(t *testing.T) {
	t.Parallel() // own stores only
	s := openStore(t, sqltest.PostgresDSN(t))
	log := apiOnly(sampleLog(60, 5))
	for k := range 4 {
		log[k].Topic = fmt.Sprintf("held topic %d", k)
		log[k].Question = fmt.Sprintf("held question %d?", k)
		log[k].Answer = fmt.Sprintf("held answer %d.", k)
		log[k].Time = day0.Add(60 * time.Hour)
	}
	for k := 4; k < 30; k++ {
		log[k].Time = day0.Add(time.Duration(k) * time.Hour)
	}
	turn(t, s, log[20:30])
	open := holdTurn(t, s, log[0:4])
	open.waitInserted(t)
	turn(t, s, log[4:12])
	committed := append(append([]analytics.Interaction{}, log[20:30]...), log[4:12]...)
	idx := buildIndex(t, s)

	// Deletions wait for writers: the open one commits first, the index
	// refreshes after the deletion.
	open.commit(t)
	committed = append(committed, log[0:4]...)
	gone := analytics.Deletion{Cat: "alpha", Before: day0.Add(6 * time.Hour)}
	if n, err := s.DeleteInteractions(t.Context(), gone, 100); err != nil || n == 0 {
		t.Fatalf("DeleteInteractions = %d, %v; want some rows", n, err)
	}
	committed = without(committed, gone)
	refresh(t, idx)
	refresh(t, idx)
	if got := statsRows(idx); got != len(committed) {
		t.Errorf("the index holds %d rows, want %d", got, len(committed))
	}
	expectMatchesReference(t, "index", idx, normalized(committed))
	expectMatchesReference(t, "raw", s, normalized(committed))
}

var _ colindex.Snapshot = (*sqlstore.Store)(nil)

func TestFeedSnapshotContract(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			porttest.TestFeedSnapshot(t, func(t *testing.T) porttest.FeedSnapshotStore { return openStore(t, b.DSN(t)) })
		})
	}
}

// TestSnapshotConnectionNotKept: on a SQLite file the connection that read
// the snapshot is closed afterwards, not pooled with the blocks and
// dictionaries it read in its page cache; on PostgreSQL it goes back to
// the pool.
func TestSnapshotConnectionNotKept(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			s := openStore(t, b.DSN(t))
			mustAppend(t, s, sampleLog(200, 0))
			if err := s.Ping(t.Context()); err != nil { // leaves a pooled connection
				t.Fatalf("Ping: %v", err)
			}
			before := s.DB().Stats()
			if before.Idle == 0 {
				t.Fatal("no idle connection to take")
			}
			rows := 0
			if _, _, err := s.ReadSnapshot(t.Context(), func(*analytics.FeedRow) error { rows++; return nil }); err != nil {
				t.Fatalf("ReadSnapshot: %v", err)
			}
			if rows == 0 {
				t.Fatal("the snapshot gave no rows")
			}
			after := s.DB().Stats()
			want := before.OpenConnections
			if b.Name != "PostgreSQL" {
				want--
			}
			if after.OpenConnections != want {
				t.Errorf("open connections %d after the snapshot, %d before; want %d", after.OpenConnections, before.OpenConnections, want)
			}
		})
	}
}
