package chatsql_test

import (
	"testing"

	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

func TestConversationPrunerContract(t *testing.T) {
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			porttest.TestConversationPruner(t, func(t *testing.T) (porttest.ChatStore, ports.ConversationPruner) {
				_, s := open(t, b.DSN(t))
				return s, s
			})
		})
	}
}
