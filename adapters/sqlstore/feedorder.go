package sqlstore

import (
	"context"

	"github.com/catsrv/catsrv/core/analytics"
)

// Writers on PostgreSQL take no common lock: chat turns and imports from
// any number of connections and instances commit concurrently, so the ids
// of interactions (taken from a sequence when a row is inserted) no longer
// commit in increasing order. The feed follows transactions instead:
// every row records the transaction that wrote it (xact, the 64-bit
// pg_current_xact_id(), a column default), and ReadSince returns the rows
// of transactions below a horizon under which every transaction that
// writes interactions has ended: the oldest such transaction still
// running, or when there is none the next transaction id. Later
// transactions get higher ids, so the set of rows below the horizon never
// changes again: a reader that remembers the horizon it read up to (its
// position) and next reads from there sees each committed row exactly
// once.
//
// The horizon is the lowest id in the current snapshot's list of running
// transactions (pg_current_snapshot) whose backend holds a lock on the
// interactions table in ROW EXCLUSIVE mode (the writers' mode, not that
// of an ANALYZE), or the snapshot's xmax. Every writer takes that lock
// (which no writer waits for) before its transaction
// has an id (writeLockFirst), so a running transaction without the lock
// is no writer of interactions, whatever else it does in the cluster. The
// rows are read by a later statement, whose snapshot sees every
// transaction that ended before the horizon was taken. Rows committed
// above the horizon wait until the older writers have ended: a long
// import delays the feed, not the writers. SQLite has one writer at a
// time: there the position stays the id.

// writeLockFirst is the first statement of every PostgreSQL transaction
// that may write interactions: see above.
const writeLockFirst = "LOCK TABLE interactions IN ROW EXCLUSIVE MODE"

// beginWrite is how a PostgreSQL write transaction starts (WriteTx), in
// one round trip: it bounds the transaction's wait for a row lock
// (lock_timeout, in milliseconds), takes the writers' table lock while the
// transaction has no id yet (writeLockFirst), then returns the id the
// transaction is given, to ask about should its commit be lost, and the
// dictionary collections counter, which no collection changes before the
// transaction ends (codecache.go).
const beginWrite = "SELECT xid, collections FROM catsrv_begin_write($1)"

// functionsComponent names this package's database functions in
// schema_migrations: a component of their own, so that a release adding
// one leaves the analytics schema's version, which older instances'
// readiness checks (Ping), as it is.
const functionsComponent = "analytics_functions"

var functionMigrations = []Migration{
	{Version: 1, Name: "write transactions begin in one round trip", Statements: func(d string) []string { return beginWriteFunction(dialectNamed(d)) }},
}

// beginWriteFunction creates beginWrite's function (PostgreSQL). Its
// steps were statements of their own (SET LOCAL lock_timeout,
// writeLockFirst, txid_current, readCollections), each a round trip and a
// statement's overhead on every chat turn.
func beginWriteFunction(d dialect) []string {
	if d != postgresDialect {
		return nil
	}
	return []string{`CREATE FUNCTION catsrv_begin_write(lock_timeout_ms integer, OUT xid bigint, OUT collections bigint)
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM set_config('lock_timeout', lock_timeout_ms::text, true);
	` + writeLockFirst + `;
	xid := txid_current();
	SELECT d.collections INTO collections FROM dictionary_collections d WHERE d.id = 1;
END
$$`}
}

// feedHorizon is the query of the horizon: see above.
const feedHorizon = `WITH snap AS (SELECT pg_current_snapshot() AS s),
	locks AS MATERIALIZED (SELECT pid, locktype, transactionid, relation, database, mode
		FROM pg_locks WHERE granted AND locktype IN ('transactionid', 'relation')),
	writers AS (SELECT t.transactionid FROM locks t JOIN locks r ON r.pid = t.pid
		WHERE t.locktype = 'transactionid' AND t.mode = 'ExclusiveLock'
		AND r.locktype = 'relation' AND r.mode = 'RowExclusiveLock' AND r.relation = 'interactions'::regclass
		AND r.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
	SELECT COALESCE(MIN(x::text::bigint), (SELECT pg_snapshot_xmax(s)::text::bigint FROM snap))
	FROM snap, pg_snapshot_xip(snap.s) AS x WHERE x::xid IN (SELECT transactionid FROM writers)`

// feedOrder adds the writing transaction to every interaction row
// (PostgreSQL only; existing rows get 0, below every transaction), and
// what lets writers run without waiting for each other: numbered code
// blocks and rollup rows in shards.
func feedOrder(d dialect) []string {
	if d != postgresDialect {
		return nil
	}
	return []string{
		`ALTER TABLE interactions ADD COLUMN xact BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE interactions ALTER COLUMN xact SET DEFAULT (pg_current_xact_id()::text::bigint)`,
		`CREATE INDEX interactions_api_xact ON interactions (xact, id) WHERE event_kind = 'api'`,
		// New code blocks take their numbers from here, so concurrent
		// writers never pick the same one (see blocks.go); above every
		// number a day's blocks had before.
		`CREATE SEQUENCE dims_blocks_seq START WITH 1099511627776`,
		// Each connection adds to its own share of a rollup row (see
		// rollupShards): concurrent turns counting the same row do not
		// wait for each other's commits.
		`ALTER TABLE rollup_cube ADD COLUMN shard INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE rollup_cube DROP CONSTRAINT rollup_cube_pkey`,
		`ALTER TABLE rollup_cube ADD PRIMARY KEY (cat, day, topic_code, model_code, persona_code, shard)`,
	}
}

// readSincePostgres is ReadSince on PostgreSQL: the api rows of the
// transactions from position after up to the horizon, in (xact, id)
// order; it returns that horizon, the next position.
func (s *Store) readSincePostgres(ctx context.Context, after int64, fn func(*analytics.FeedRow) error) (int64, error) {
	// Every transaction that ended before this statement is visible to
	// the read that follows it, in its later snapshot.
	var horizon int64
	if err := s.db.DB.QueryRowContext(ctx, feedHorizon).Scan(&horizon); err != nil {
		return after, internal(err)
	}
	if horizon <= after {
		return after, nil
	}
	rows, err := s.db.DB.QueryContext(ctx, "SELECT id, CAST(EXTRACT(EPOCH FROM occurred_at) * 1000000 AS BIGINT)"+
		feedColumns+" FROM interactions"+
		" WHERE event_kind = $1 AND xact >= $2 AND xact < $3 ORDER BY xact, id", analytics.EventKindAPI, after, horizon)
	if err != nil {
		return after, internal(err)
	}
	defer rows.Close()
	var f feedScan
	for rows.Next() {
		if err := f.scan(rows); err != nil {
			return after, err
		}
		if err := fn(&f.r); err != nil {
			return after, err
		}
	}
	if err := rows.Err(); err != nil {
		return after, internal(err)
	}
	return horizon, nil
}
