package memstore_test

import (
	"testing"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

func TestDocumentContract(t *testing.T) {
	porttest.TestDocumentStore(t, func(*testing.T) ports.DocumentStore { return memstore.NewDocuments() })
}
