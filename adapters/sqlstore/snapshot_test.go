package sqlstore_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

// TestPassCountsOneCommittedState commits an append while a raw pass has
// planned its day ranges but not read them: the answer must count the
// state before the append (its snapshot) in every part, not some day
// ranges or parts before and some after; the next answer counts it all.
// The rollups' answer holds to the same state.
func TestPassCountsOneCommittedState(t *testing.T) {
	for _, b := range sqltest.Backends() {
		for _, rollups := range []bool{false, true} {
			name := b.Name + "/raw"
			if rollups {
				name = b.Name + "/rollups"
			}
			t.Run(name, func(t *testing.T) { testPassCountsOneCommittedState(t, b.DSN(t), rollups) })
		}
	}
}

func testPassCountsOneCommittedState(t *testing.T, dsn string, rollups bool) {
	s := sqltest.Open(t, dsn)
	other := sqltest.Open(t, dsn) // another process's writer
	first := sampleLog(400, 1)
	mustAppend(t, s, first)
	late := sampleLog(300, 2)
	for k := range late {
		late[k].Time = late[k].Time.Add(time.Duration(k%3) * 24 * time.Hour)
	}
	appended := false
	sqlstore.SetPassPlanned(s, func() {
		if appended {
			return
		}
		appended = true
		if _, err := other.Append(t.Context(), analytics.Each(late)); err != nil {
			t.Errorf("append during the pass: %v", err)
		}
	})
	var agg ports.Aggregator = s
	if rollups {
		agg = s.Rollups()
	}
	sel := analytics.Selection{Cat: "alpha"}
	// One answer, whose pass the commit happens in: all of it counts
	// the state before the commit.
	expectAnswer(t, "during a commit (the state before it)", agg, normalized(first), sel, 2)
	if !appended {
		t.Fatal("the hook did not run: the pass planned no parts")
	}
	all := append(normalized(first), normalized(late)...)
	expectAnswer(t, "after the commit", agg, all, sel)
}

// TestPassKeepsItsExtraConnection: PostgreSQL's pool has no bound, so a
// raw pass on a cold pool opens the extra connection its second reader
// needs, and the pool keeps it: later passes open none.
func TestPassKeepsItsExtraConnection(t *testing.T) {
	s := sqltest.Open(t, sqltest.PostgresDSN(t))
	prev := runtime.GOMAXPROCS(2) // a pass uses one reader per core, up to two
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	log := sampleLog(400, 1)
	mustAppend(t, s, log)
	sel := analytics.Selection{Cat: "alpha"}
	expectAnswer(t, "first pass", s, normalized(log), sel)
	first := sqlstore.PoolStats(s).OpenConnections
	if first < 2 {
		t.Fatalf("after the first pass the pool holds %d connection(s), want the pass's own and its extra one", first)
	}
	for range 5 {
		expectAnswer(t, "later pass", s, normalized(log), sel)
	}
	if got := sqlstore.PoolStats(s).OpenConnections; got != first {
		t.Fatalf("later passes changed the pool from %d to %d connections, want them reused", first, got)
	}
}
