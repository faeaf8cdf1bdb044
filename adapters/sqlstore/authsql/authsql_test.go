package authsql_test

import (
	"context"
	"testing"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/authsql"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

func open(t *testing.T, dsn string) *authsql.Store {
	t.Helper()
	s := sqltest.Open(t, dsn, authComponent)
	a, err := authsql.Open(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	// A second Open finds the schema current and changes nothing.
	if _, err := authsql.Open(t.Context(), s); err != nil {
		t.Fatalf("second Open: %v", err)
	}
	return a
}

var backends = sqltest.Backends()

// authComponent is the auth schema, for sqltest.Open to bring up to date
// (or find so in a pooled schema).
var authComponent = sqltest.Component{Name: authsql.Component, Migrate: func(ctx context.Context, s *sqlstore.Store) error {
	_, err := authsql.Open(ctx, s)
	return err
}}

func TestAuthContract(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			porttest.TestAuthStore(t, func(t *testing.T) porttest.AuthStore { return open(t, b.DSN(t)) })
		})
	}
}

func TestMemoryContract(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			porttest.TestMemoryStore(t, func(t *testing.T) ports.MemoryStore { return open(t, b.DSN(t)) })
		})
	}
}
