package sqlstore_test

import (
	"testing"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

// TestEraserContract runs the deletion contract on both databases: after
// every batch the raw log, the rollups and a column index following the
// database (through its deletion feed) answer as the reference over the
// rows that remain.
func TestEraserContract(t *testing.T) {
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
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
				}
			})
		})
	}
}
