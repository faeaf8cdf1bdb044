package sqlstore_test

import (
	"testing"

	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

// TestBrowserContract runs the chat-log contract on both databases.
func TestBrowserContract(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			if b.Name == "PostgreSQL" {
				serverDSN(t)
			}
			porttest.TestInteractionBrowser(t, func(t *testing.T) (ports.InteractionLog, ports.InteractionBrowser) {
				s := openStore(t, b.DSN(t))
				return s, s
			})
		})
	}
}
