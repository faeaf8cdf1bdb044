package chatsql_test

import (
	"testing"

	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

func TestConversationPrunerContract(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			porttest.TestConversationPruner(t, func(t *testing.T) (porttest.ChatStore, ports.ConversationPruner) {
				_, s := open(t, b.DSN(t))
				return s, s
			})
		})
	}
}
