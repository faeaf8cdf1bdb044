package memstore_test

import (
	"testing"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

func TestCatOverrides(t *testing.T) {
	porttest.TestCatOverrideStore(t, func(*testing.T) ports.CatOverrideStore { return memstore.NewCatOverrides() }, nil)
}
