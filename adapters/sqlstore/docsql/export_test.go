package docsql

import (
	"context"

	"github.com/catsrv/catsrv/adapters/sqlstore"
)

// OpenAtVersion opens the document store with its schema migrated only up
// to version: what a database written by an older catsrv holds.
func OpenAtVersion(ctx context.Context, s *sqlstore.Store, version int) (*Store, error) {
	if err := s.Migrate(ctx, Component, migrations[:version]); err != nil {
		return nil, err
	}
	return &Store{db: s.DB(), postgres: s.Dialect() == sqlstore.DialectPostgres}, nil
}
