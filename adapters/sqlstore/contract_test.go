package sqlstore_test

import (
	"testing"

	"github.com/catsrv/catsrv/adapters/colindex"

	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

// TestContract runs the interaction log contract on both databases, once
// reading the raw log, once reading the rollups and once reading the
// column index built from the database (told of every commit, so the
// index holds every Append's rows before it returns).
func TestContract(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			if b.Name == "PostgreSQL" {
				serverDSN(t)
			}
			t.Run("Raw", func(t *testing.T) {
				t.Parallel() // a store per case
				if testing.Short() && b.Name == "PostgreSQL" {
					t.Skip("-short: the raw contract runs on SQLite here, on PostgreSQL too in make test")
				}
				porttest.TestInteractionLog(t, func(t *testing.T) (ports.InteractionLog, ports.Aggregator) {
					s := openStore(t, b.DSN(t))
					return s, s
				})
			})
			t.Run("Rollups", func(t *testing.T) {
				t.Parallel() // a store per case
				if testing.Short() && b.Name == "PostgreSQL" {
					t.Skip("-short: the rollups' contract runs on SQLite here, on PostgreSQL too in make test")
				}
				porttest.TestInteractionLog(t, func(t *testing.T) (ports.InteractionLog, ports.Aggregator) {
					s := openStore(t, b.DSN(t))
					return s, s.Rollups()
				})
			})
			t.Run("ColumnIndex", func(t *testing.T) {
				t.Parallel() // a store per case
				porttest.TestInteractionLog(t, func(t *testing.T) (ports.InteractionLog, ports.Aggregator) {
					s := openStore(t, b.DSN(t))
					idx, err := colindex.Build(t.Context(), s)
					if err != nil {
						t.Fatalf("Build: %v", err)
					}
					s.TellCommits(idx.Hold)
					return s, idx
				})
			})
		})
	}
}
