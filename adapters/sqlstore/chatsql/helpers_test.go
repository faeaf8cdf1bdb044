package chatsql_test

import (
	"context"
	"testing"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/chatsql"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
)

// backends are SQLite and PostgreSQL (an isolated schema per test).
var backends = sqltest.Backends()

// chatComponent is the chat schema, for sqltest.Open to bring up to date
// (or find so in a pooled schema).
var chatComponent = sqltest.Component{Name: chatsql.Component, Migrate: func(ctx context.Context, s *sqlstore.Store) error {
	_, err := chatsql.Open(ctx, s)
	return err
}}

// open opens the analytics store and the chat store on dsn, closed when
// the test ends. A second chatsql.Open finds the schema current.
func open(t *testing.T, dsn string) (*sqlstore.Store, *chatsql.Store) {
	t.Helper()
	s := sqltest.Open(t, dsn, chatComponent)
	if _, err := chatsql.Open(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	c, err := chatsql.Open(t.Context(), s)
	if err != nil {
		t.Fatalf("second Open: %v", err)
	}
	return s, c
}
