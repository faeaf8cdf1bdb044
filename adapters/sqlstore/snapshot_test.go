package sqlstore_test

import (
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
// The rollups' answer (its total and small lists from rollup_cube, read
// before the pass) holds to the same state.
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
