package memstore_test

import (
	"testing"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

// The memory store is its own rollup store; both roles run the contract.
func TestInteractionLogContract(t *testing.T) {
	t.Run("Log", func(t *testing.T) {
		porttest.TestInteractionLog(t, func(*testing.T) (ports.InteractionLog, ports.Aggregator) {
			s := memstore.New()
			return s, s
		})
	})
	t.Run("Rollups", func(t *testing.T) {
		porttest.TestInteractionLog(t, func(*testing.T) (ports.InteractionLog, ports.Aggregator) {
			s := memstore.New()
			var rollups ports.RollupStore = s
			return s, rollups
		})
	})
}
