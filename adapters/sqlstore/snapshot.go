package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"regexp"
	"time"
)

// queryer is what a pass reads through: one of its read transactions.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// A pass reads everything it counts (the highest codes, the filters'
// codes, the range's day blocks) in read transactions that all see one
// committed state, so that one answer never counts part of a
// transaction committed while it read: an import of another process
// shows in it whole or not at all.
//
// The first transaction is the pass's own. The others let more
// connections read day ranges at once; each sees the first one's state
// or is not used: on PostgreSQL it adopts the first's snapshot
// (pg_export_snapshot, SET TRANSACTION SNAPSHOT); on SQLite, which has no
// way to share one, it is used only when it sees the same newest row as
// the first (ids grow in commit order: appends take turns).
//
// SQLite's pool is bounded: there an extra connection is taken only when
// the pool has one at hand, so a pass never holds one connection while
// waiting for another. PostgreSQL's pool is not bounded, so a pass opens
// the extra connection when none is idle, and the pool keeps it for the
// next pass. (Giving up after a moment there, as on SQLite, aborted
// nearly every connection attempt, a server backend started and thrown
// away each time, and a pool that started cold never grew.)

// snapshotIdle is how long a pass waits for an extra SQLite connection.
const snapshotIdle = 2 * time.Millisecond

// snapshotID is the form of PostgreSQL's exported snapshot ids.
var snapshotID = regexp.MustCompile(`^[0-9A-Fa-f-]+$`)

// passSnapshot is the read transactions of one pass.
type passSnapshot struct {
	txs   []*sql.Tx
	conns []*sql.Conn // the extra transactions' connections
}

// beginRead begins a read-only transaction that sees one state from its
// first statement (REPEATABLE READ on PostgreSQL; a deferred read
// transaction on SQLite, whose read snapshot also holds to its end).
func (s *Store) beginRead(ctx context.Context, db interface {
	BeginTx(context.Context, *sql.TxOptions) (*sql.Tx, error)
}) (*sql.Tx, error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if s.dialect == postgresDialect {
		opts.Isolation = sql.LevelRepeatableRead
	}
	return db.BeginTx(ctx, opts)
}

// openSnapshot begins the pass's own read transaction and reads its
// state marker.
func (s *Store) openSnapshot(ctx context.Context) (*passSnapshot, error) {
	tx, err := s.beginRead(ctx, s.db.DB)
	if err != nil {
		return nil, internal(err)
	}
	return &passSnapshot{txs: []*sql.Tx{tx}}, nil
}

// own is the pass's own transaction.
func (p *passSnapshot) own() *sql.Tx { return p.txs[0] }

// extend adds up to n more transactions that see the same state as the
// first, each on a connection the pool has at hand; it adds fewer (or
// none) when the pool has none or a transaction sees another state.
func (s *Store) extend(ctx context.Context, p *passSnapshot, n int) error {
	if n <= 0 {
		return nil
	}
	var (
		exported string
		marker   int64
	)
	if s.dialect == postgresDialect {
		if err := p.own().QueryRowContext(ctx, "SELECT pg_export_snapshot()").Scan(&exported); err != nil {
			return internal(err)
		}
		if !snapshotID.MatchString(exported) {
			return nil
		}
	} else if err := p.own().QueryRowContext(ctx, newestRow).Scan(&marker); err != nil {
		return internal(err)
	}
	for range n {
		conn, tx, ok := s.sameState(ctx, exported, marker)
		if !ok {
			return nil
		}
		p.txs, p.conns = append(p.txs, tx), append(p.conns, conn)
	}
	return nil
}

// newestRow reads the state marker of a SQLite read transaction.
const newestRow = "SELECT COALESCE(MAX(id), 0) FROM interactions"

// sameState begins a read transaction on another connection (on SQLite
// only one the pool has at hand) and keeps it if it sees the state of the exported snapshot
// (PostgreSQL) or of the marker (SQLite).
func (s *Store) sameState(ctx context.Context, exported string, marker int64) (*sql.Conn, *sql.Tx, bool) {
	wait := ctx
	if s.dialect != postgresDialect {
		var cancel context.CancelFunc
		wait, cancel = context.WithTimeout(ctx, snapshotIdle)
		defer cancel()
	}
	conn, err := s.db.DB.Conn(wait)
	if err != nil {
		return nil, nil, false
	}
	tx, err := s.beginRead(ctx, conn)
	if err != nil {
		_ = conn.Close()
		return nil, nil, false
	}
	if s.dialect == postgresDialect {
		//nolint:gosec // the id is the server's own, checked against snapshotID
		_, err = tx.ExecContext(ctx, "SET TRANSACTION SNAPSHOT '"+exported+"'")
	} else {
		var got int64
		err = tx.QueryRowContext(ctx, newestRow).Scan(&got)
		if err == nil && got != marker {
			err = errOtherState
		}
	}
	if err != nil {
		_ = tx.Rollback()
		_ = conn.Close()
		return nil, nil, false
	}
	return conn, tx, true
}

// errOtherState marks an extra transaction that saw another state.
var errOtherState = errors.New("another committed state")

// close ends the read transactions and gives their connections back.
func (p *passSnapshot) close() {
	for _, tx := range p.txs {
		_ = tx.Rollback()
	}
	for _, c := range p.conns {
		_ = c.Close()
	}
}
