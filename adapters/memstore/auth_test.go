package memstore_test

import (
	"testing"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

func TestAuthContract(t *testing.T) {
	porttest.TestAuthStore(t, func(*testing.T) porttest.AuthStore { return memstore.NewAuth() })
}

func TestMemoryContract(t *testing.T) {
	porttest.TestMemoryStore(t, func(*testing.T) ports.MemoryStore { return memstore.NewAuth() })
}
