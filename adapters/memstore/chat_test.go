package memstore_test

import (
	"testing"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

func TestConversationsContract(t *testing.T) {
	porttest.TestConversationStore(t, func(*testing.T) (porttest.ChatStore, ports.Aggregator) {
		log := memstore.New()
		return memstore.NewConversations(log), log
	})
}

func TestConversationPrunerContract(t *testing.T) {
	porttest.TestConversationPruner(t, func(*testing.T) (porttest.ChatStore, ports.ConversationPruner) {
		s := memstore.NewConversations(memstore.New())
		return s, s
	})
}
