package sqlstore_test

import (
	"testing"

	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

// TestTokenUsageContract holds TokensSince to the reference sum on both
// databases.
func TestTokenUsageContract(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			if b.Name == "PostgreSQL" {
				serverDSN(t)
			}
			porttest.TestTokenUsage(t, func(t *testing.T) (ports.InteractionLog, ports.TokenUsage) {
				s := openStore(t, b.DSN(t))
				return s, s
			})
		})
	}
}
