package memstore_test

import (
	"testing"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

func TestInteractionBrowserContract(t *testing.T) {
	porttest.TestInteractionBrowser(t, func(*testing.T) (ports.InteractionLog, ports.InteractionBrowser) {
		s := memstore.New()
		return s, s
	})
}
