package sqlstore

import (
	"context"
	"database/sql"
	"sync"
)

// sharedStmt is a statement prepared on the store's pool, which
// database/sql prepares once on each connection it runs on and keeps
// there: a transaction's Tx.StmtContext reuses the connection's. On
// SQLite the writer runs its most frequent statement, the insert of a full
// batch of raw rows, through one, so an ingestion batch of 1000 lines does
// not parse a statement of 14,000 parameters in every transaction. (On
// PostgreSQL the writer sends its batch statements as text with bound
// values, and pgx's statement cache prepares each once per connection.)
// Values are bound, never written into the text.
type sharedStmt struct {
	mu     sync.Mutex
	stmt   *sql.Stmt
	closed bool
}

// in returns the statement for tx, preparing it on db the first time.
func (s *sharedStmt) in(ctx context.Context, db *sql.DB, tx *sql.Tx, query func() string) (*sql.Stmt, error) {
	s.mu.Lock()
	if s.stmt == nil && !s.closed {
		stmt, err := db.PrepareContext(ctx, query())
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		s.stmt = stmt
	}
	stmt := s.stmt
	s.mu.Unlock()
	if stmt == nil {
		return nil, sql.ErrConnDone
	}
	// Closed with the transaction; the connection's prepared statement
	// stays for the next.
	return tx.StmtContext(ctx, stmt), nil
}

// close releases the statement on every connection.
func (s *sharedStmt) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stmt != nil {
		_ = s.stmt.Close()
	}
	s.stmt, s.closed = nil, true
}
