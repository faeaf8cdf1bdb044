package sqlstore_test

import (
	"testing"

	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

// TestUsageContract holds the store's usage counts, feedback, erasure and
// review queues to the reference, on both databases.
func TestUsageContract(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			if b.Name == "PostgreSQL" {
				serverDSN(t)
			}
			porttest.TestUsage(t, func(t *testing.T) porttest.UsageStore {
				s := openStore(t, b.DSN(t))
				return porttest.UsageStore{Log: s, Feedback: s, Counts: map[string]ports.UsageCounter{"sql": s}, Browser: s, Eraser: s}
			})
		})
	}
}
