package chatsql_test

import (
	"testing"

	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

func TestConversationContract(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			porttest.TestConversationStore(t, func(t *testing.T) (porttest.ChatStore, ports.Aggregator) {
				log, s := open(t, b.DSN(t))
				return s, log
			})
		})
	}
}

func TestCatOverrideContract(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			var dsn string
			porttest.TestCatOverrideStore(t,
				func(t *testing.T) ports.CatOverrideStore {
					dsn = b.DSN(t)
					_, s := open(t, dsn)
					return s
				},
				func(t *testing.T) ports.CatOverrideStore {
					_, s := open(t, dsn)
					return s
				})
		})
	}
}
