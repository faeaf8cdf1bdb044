package sqlstore_test

import (
	"testing"

	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

// TestContract runs the interaction log contract on both databases, once
// reading the raw log and once reading the rollups.
func TestContract(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			if b.name == "PostgreSQL" {
				serverDSN(t)
			}
			t.Run("Raw", func(t *testing.T) {
				porttest.TestInteractionLog(t, func(t *testing.T) (ports.InteractionLog, ports.Aggregator) {
					s := openStore(t, b.dsn(t))
					return s, s
				})
			})
			t.Run("Rollups", func(t *testing.T) {
				porttest.TestInteractionLog(t, func(t *testing.T) (ports.InteractionLog, ports.Aggregator) {
					s := openStore(t, b.dsn(t))
					return s, s.Rollups()
				})
			})
		})
	}
}
