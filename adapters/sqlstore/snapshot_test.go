package sqlstore_test

import (
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/core/analytics"
)

// TestPassCountsOneCommittedState commits an append while a raw pass has
// planned its day ranges but not read them: the pass must count the state
// before the append (its snapshot), not some day ranges before and some
// after; the next pass counts it all.
func TestPassCountsOneCommittedState(t *testing.T) {
	for _, b := range sqltest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			dsn := b.DSN(t)
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
			sel := analytics.Selection{Cat: "alpha"}
			expectAnswer(t, "during a commit (the state before it)", s, normalized(first), sel)
			if !appended {
				t.Fatal("the hook did not run: the pass planned no parts")
			}
			all := append(normalized(first), normalized(late)...)
			expectAnswer(t, "after the commit", s, all, sel)
		})
	}
}
