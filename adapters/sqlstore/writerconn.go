package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
)

// On a SQLite file every Append writes on one connection, the store's
// writer connection, kept out of the pool between Appends and used only by
// the holder of the writer turn: a SQLite connection keeps its page cache
// only while no other connection writes the file, so batch after batch on
// one connection finds the index and block pages it writes cached.

// writerConn returns the writer connection, opening it the first time
// (its page cache enlarged, its statement journals in memory). The caller
// holds the writer turn.
func (s *Store) writerConn(ctx context.Context) (*sql.Conn, error) {
	if s.writer != nil {
		return s.writer, nil
	}
	conn, err := s.db.DB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	for _, pragma := range []string{s.writerCache, writerTemp} {
		if _, err := conn.ExecContext(ctx, pragma); err != nil {
			dropConn(conn)
			return nil, err
		}
	}
	s.writer = conn
	return conn, nil
}

// keepWriter ends an Append's use of the writer connection: it stays for
// the next Append unless an error ended the transaction (a failed commit
// or rollback), after which its state is not known and it is discarded.
// The caller holds the writer turn.
func (s *Store) keepWriter(txErr error) {
	if txErr == nil || s.writer == nil {
		return
	}
	dropConn(s.writer)
	s.writer = nil
}

// closeWriter gives the writer connection back before the store closes,
// once a running Append is done with it.
func (s *Store) closeWriter() {
	s.writeTurn <- struct{}{}
	defer func() { <-s.writeTurn }()
	if s.writer != nil {
		_ = s.writer.Close()
		s.writer = nil
	}
}

// dropConn closes a connection without returning it to the pool.
func dropConn(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}
