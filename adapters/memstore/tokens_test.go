package memstore_test

import (
	"testing"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

func TestTokenUsageContract(t *testing.T) {
	porttest.TestTokenUsage(t, func(*testing.T) (ports.InteractionLog, ports.TokenUsage) {
		s := memstore.New()
		return s, s
	})
}
