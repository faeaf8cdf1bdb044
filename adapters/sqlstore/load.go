package sqlstore

import (
	"context"
	"iter"
	"strconv"

	"github.com/catsrv/catsrv/core/analytics"
)

// A SQLite file in WAL mode sends every page an import writes through the
// write-ahead log first: the log grows to the size of the whole import (it
// is one transaction), every page the writer reads back is looked up in
// the log's index, whose cost grows with the log, and the commit's
// checkpoint copies it all into the file again. At 10M lines that was 4.5
// GB written twice and 12% of the CPU in the log's lookups. A rollback
// journal writes a page once, into the file; it journals only the pages
// the file had before the transaction, so a new file's journal stays a few
// pages long. Changing the journal mode takes the file for one connection,
// which only a process alone with the file can do, so Load tries and, if
// another connection has the file open, writes through the log as Append
// does.

// Load is Append for a bulk import (catsrv import): the same transaction,
// the same result. On a SQLite file that no other connection, in this
// process or another, has open, it writes the pages straight into the file
// under a rollback journal instead of through the write-ahead log, and
// returns the file to WAL mode when its transaction ends, committed or
// not. While it runs, a process opening the file waits for it to end
// (Open retries the busy file for about 25 minutes), and so would any
// other use of this store: Load is for a process that does nothing else
// with it meanwhile (catsrv import). A process killed during it leaves a
// hot journal, from which the next connection to the file rolls it back.
// Elsewhere, and when the file is not to be had alone, it is Append.
func (s *Store) Load(ctx context.Context, interactions iter.Seq2[analytics.Interaction, error]) (int, error) {
	if !s.reserveWriter {
		return s.Append(ctx, interactions)
	}
	return s.append(ctx, interactions, s.newHeld(), true)
}

// leaveWAL switches the writer connection to a rollback journal, with
// full syncs (NORMAL is only safe with the log), and reports whether it
// did. It closes this process's idle connections first (the writer
// connection is kept out of the pool): each holds the file open in WAL
// mode, which keeps the switch from happening. The caller holds the
// writer turn.
func (s *Store) leaveWAL(ctx context.Context) bool {
	s.db.SetMaxIdleConns(0) // closes the idle connections
	s.db.SetMaxIdleConns(sqliteIdleConns)
	conn, err := s.writerConn(ctx)
	if err != nil {
		return false
	}
	// Not waiting: another connection holding the file is no passing
	// state but an open server or import.
	mode := ""
	err = conn.QueryRowContext(ctx, "PRAGMA busy_timeout = 0").Scan(new(int))
	if err == nil {
		err = conn.QueryRowContext(ctx, "PRAGMA journal_mode = DELETE").Scan(&mode)
	}
	if err == nil && mode == "delete" {
		_, err = conn.ExecContext(ctx, "PRAGMA synchronous = FULL")
	}
	if _, restore := conn.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.Itoa(sqliteBusyTimeoutMS)); restore != nil && err == nil {
		err = restore
	}
	if err != nil {
		// Its state is not known: the next Append opens another.
		dropConn(conn)
		s.writer = nil
		return false
	}
	return mode == "delete"
}

// backToWAL returns the file to WAL mode after a Load that left it, also
// when its transaction failed or its context was cancelled, and discards
// the writer connection, whose settings were the Load's: the next Append
// opens another. When a failed transaction has already discarded the
// writer, a new connection does it: every connection asks for WAL mode
// when it opens (openSQLite). If the switch fails (another process opened
// the file meanwhile), that process's connection has switched it. The
// caller holds the writer turn.
func (s *Store) backToWAL(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	conn := s.writer
	s.writer = nil
	if conn == nil {
		var err error
		if conn, err = s.db.DB.Conn(ctx); err != nil {
			return
		}
	}
	_, _ = conn.ExecContext(ctx, "PRAGMA journal_mode = WAL")
	dropConn(conn)
}
