package memstore_test

import (
	"testing"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

func TestUsageContract(t *testing.T) {
	porttest.TestUsage(t, func(*testing.T) porttest.UsageStore {
		s := memstore.New()
		return porttest.UsageStore{Log: s, Feedback: s, Counts: map[string]ports.UsageCounter{"memory": s}, Browser: s, Eraser: s}
	})
}
