package colindex_test

import (
	"testing"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
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
