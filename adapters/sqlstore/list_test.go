package sqlstore_test

import (
	"testing"

	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

// TestBrowserContract runs the chat-log contract on both databases.
func TestBrowserContract(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			if b.name == "PostgreSQL" {
				serverDSN(t)
			}
			porttest.TestInteractionBrowser(t, func(t *testing.T) (ports.InteractionLog, ports.InteractionBrowser) {
				s := openStore(t, b.dsn(t))
				return s, s
			})
		})
	}
}
