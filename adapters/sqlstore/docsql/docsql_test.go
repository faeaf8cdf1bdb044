package docsql_test

import (
	"testing"

	"github.com/catsrv/catsrv/adapters/sqlstore/docsql"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

func TestDocumentContract(t *testing.T) {
	for _, b := range sqltest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			porttest.TestDocumentStore(t, func(t *testing.T) ports.DocumentStore {
				s := sqltest.Open(t, b.DSN(t))
				if _, err := docsql.Open(t.Context(), s); err != nil {
					t.Fatal(err)
				}
				d, err := docsql.Open(t.Context(), s) // a second Open finds the schema current
				if err != nil {
					t.Fatalf("second Open: %v", err)
				}
				return d
			})
		})
	}
}
