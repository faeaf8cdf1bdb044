// Package sqlstore keeps the interaction log and its rollups in SQL, on
// SQLite (embedded, pure Go) or PostgreSQL, through bun.
//
// The raw log answers [ports.InteractionLog] with one pass over the
// column-wise codes of the interactions (dims_blocks); [Rollups] answers
// [ports.RollupStore] from daily rollups that every Append updates in the
// same transaction as the raw rows, so the two paths can never disagree.
// Both must answer exactly as the core reference (analytics.CountAnswer)
// does, each answer from one committed state. The raw log is also the
// feed (ReadSince) the column index follows.
package sqlstore

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

var (
	_ ports.InteractionLog = (*Store)(nil)
	_ ports.RollupStore    = (*Rollups)(nil)
)

// The names Dialect reports.
const (
	DialectSQLite   = "sqlite"
	DialectPostgres = "postgres"
)

// dsnForms names the accepted DSN forms in error messages.
const dsnForms = "expected sqlite:PATH, sqlite::memory: or postgres://…"

// sqliteMaxConns bounds the connections to a SQLite file; of them,
// sqliteIdleConns stay open when idle (database/sql's default).
const (
	sqliteMaxConns  = 4
	sqliteIdleConns = 2
)

// Idle PostgreSQL connections the pool keeps (postgresIdleConns), and
// for how long one stays unused before it is closed (postgresIdleTime).
// database/sql keeps 2 by default: under concurrent chat turns every
// transaction beyond two then closed its connection when it ended and
// the next one opened a new one (a server process started, the session
// settings checked), which cost more than the turn itself. Keeping as many
// as concurrent work uses stops that churn; the idle time gives them back
// once the load is gone. The bound on idle connections never opens one:
// a pool holds as many as its concurrent work asks for, and this only
// decides whether one is closed when its work ends. At 16, 32 chat users
// still closed and reopened about 30 connections in 2,000 chats (each a
// new server process with cold catalog and statement caches); 64 keeps
// what such a load uses.
const (
	postgresIdleConns = 64
	postgresIdleTime  = time.Minute
)

// sqliteBusyTimeoutMS is how long a SQLite writer waits for another
// process's write transaction before giving up.
const sqliteBusyTimeoutMS = 30000

// Store is the interaction log in a SQL database. Safe for concurrent use.
type Store struct {
	db      *bun.DB
	dialect dialect
	// writeTurn queues this process's SQLite writers (a one-slot
	// semaphore, so that a chat turn can stop waiting, see turnWait):
	// SQLite allows one writer at a time, and queueing here beats waiting
	// on busy_timeout.
	writeTurn chan struct{}
	// beforeCommit, set by tests only, runs in WriteTx just before the
	// commit, and commit replaces tx.Commit when set.
	beforeCommit func(ctx context.Context, tx bun.Tx) error
	commit       func(tx bun.Tx) error
	// compactAlways, set by tests only, merges small code blocks on every
	// PostgreSQL write that leaves one (blockcompact.go).
	compactAlways bool
	// passPlanned, a test hook, runs once a pass has planned its parts
	// and before it takes more connections.
	passPlanned func()
	// afterDeleteBatch, a test hook, runs after each committed batch of
	// DeleteInteractions.
	afterDeleteBatch func()
	// localLocks are the job locks of a SQLite database (joblock.go).
	localLocks localLocks
	// rawInsert is the insert of a full batch of raw rows, prepared once
	// per connection rather than once per transaction (sharedstmt.go).
	rawInsert sharedStmt
	// reserveWriter is set on a SQLite file: Appends write on writer, a
	// connection kept for them (writerconn.go), used only by the holder
	// of writeTurn.
	reserveWriter bool
	writer        *sql.Conn
	// codes caches the dictionary codes committed Appends used
	// (codecache.go).
	codes codeCache
	// writerCache sets the page cache of the SQLite connection Appends
	// write on: writerCache or, with BulkWrites, bulkWriterCache.
	writerCache string
	// tell is the follower told of each committed write (tell.go).
	tell atomic.Pointer[func(rows []analytics.FeedRow, givenAt int64, complete bool)]
}

// Open connects to the database the DSN names and brings its schema up to
// date. DSN forms: sqlite:PATH (the parent directory is created),
// sqlite::memory: (a private in-memory database, for tests) and
// postgres://… or postgresql://…. Any other form is an errs.KindInvalid
// error.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	return open(ctx, dsn, analyticsMigrations, opts...)
}

// Option is a choice about how a Store is set up, given to Open.
type Option func(*Store)

// BulkWrites sets a store up for large batches of interactions (catsrv
// import): on SQLite the connection that writes keeps a 32 MiB page cache
// instead of 8 MiB, for the rollup upserts of batches of thousands of
// rows. It changes nothing on PostgreSQL.
func BulkWrites() Option {
	return func(s *Store) { s.writerCache = bulkWriterCache }
}

// open is Open with the schema steps to bring the database to.
func open(ctx context.Context, dsn string, steps []Migration, opts ...Option) (*Store, error) {
	var (
		sqldb *sql.DB
		d     dialect
		err   error
	)
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		sqldb, err = openSQLite(strings.TrimPrefix(dsn, "sqlite:"))
		d = sqliteDialect
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		sqldb, err = openPostgres(dsn)
		d = postgresDialect
	default:
		return nil, errs.New(errs.KindInvalid, "unsupported database DSN: %s", dsnForms)
	}
	if err != nil {
		return nil, err
	}
	var db *bun.DB
	if d == sqliteDialect {
		db = bun.NewDB(sqldb, sqlitedialect.New())
	} else {
		db = bun.NewDB(sqldb, pgdialect.New())
	}
	s := &Store{db: db, dialect: d, writeTurn: make(chan struct{}, 1),
		reserveWriter: d == sqliteDialect && strings.TrimPrefix(dsn, "sqlite:") != ":memory:", writerCache: writerCache}
	for _, o := range opts {
		o(s)
	}
	if err := ping(ctx, db); err != nil {
		_ = db.Close()
		return nil, errs.Wrap(errs.KindUnavailable, err, "database unreachable")
	}
	if err := s.Migrate(ctx, analyticsComponent, steps); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := s.Migrate(ctx, deletionsComponent, deletionMigrations); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := s.Migrate(ctx, functionsComponent, functionMigrations); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// ping checks the first connection. A fresh SQLite file that several
// processes open at once can refuse the switch to WAL with SQLITE_BUSY
// without ever calling the busy handler, so that one error is retried for
// a while.
func ping(ctx context.Context, db *bun.DB) error {
	const attempts = 50
	var err error
	for range attempts {
		if err = db.PingContext(ctx); err == nil || !sqliteBusy(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return err
}

func sqliteBusy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
}

func openSQLite(path string) (*sql.DB, error) {
	if path == "" {
		return nil, errs.New(errs.KindInvalid, "empty SQLite path: %s", dsnForms)
	}
	memory := path == ":memory:"
	if !memory {
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return nil, errs.Wrap(errs.KindUnavailable, err, "cannot create the database directory")
		}
	}
	// A file: URI lets any path through once ?, # and % are escaped; the
	// underscore keys are read by the driver on every new connection.
	escaped := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(path)
	// Readers get a small page cache each (SQLite allocates it outside
	// the Go heap, per connection): the raw pass reads each code block
	// once, so a larger cache only holds more of them. 2 MiB instead of
	// 8 took a 10M server's peak through raw requests from 413-415 MiB to
	// 369-373, as fast (docs/benchmarks.md, section 27). The connection
	// Appends write on has its own (writerCache).
	dsn := "file:" + escaped + "?_pragma=busy_timeout(" + strconv.Itoa(sqliteBusyTimeoutMS) + ")" +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-2048)&_txlock=immediate"
	sqldb, err := sql.Open(sqliteshim.ShimName, dsn)
	if err != nil {
		return nil, errs.Wrap(errs.KindInternal, err, "cannot open SQLite")
	}
	if memory {
		// Every connection to :memory: is its own empty database.
		sqldb.SetMaxOpenConns(1)
	} else {
		// Each connection keeps its own page cache outside the Go heap:
		// a bounded pool bounds the memory. Four cover the raw pass's two
		// readers, a writer and a refresh of the column index; nothing
		// holds one connection while waiting for another, except a writer,
		// and writers take turns (writeTurn), so four cannot deadlock.
		// One more is Append's own, kept out of the pool (writerconn.go).
		sqldb.SetMaxOpenConns(sqliteMaxConns + 1)
		sqldb.SetMaxIdleConns(sqliteIdleConns)
	}
	return sqldb, nil
}

func openPostgres(dsn string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx redacts the password from its own message; ours names none.
		return nil, errs.Wrap(errs.KindInvalid, err, "invalid PostgreSQL DSN")
	}
	forceSessionSettings(cfg)
	db := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(checkSessionSettings))
	db.SetMaxIdleConns(postgresIdleConns)
	db.SetConnMaxIdleTime(postgresIdleTime)
	return db, nil
}

// Close closes the database.
func (s *Store) Close() error {
	if s.reserveWriter {
		s.closeWriter()
	}
	s.rawInsert.close()
	if err := s.db.Close(); err != nil {
		return errs.Wrap(errs.KindInternal, err, "closing the database failed")
	}
	return nil
}

// Dialect names the database: DialectSQLite or DialectPostgres.
func (s *Store) Dialect() string { return s.dialect.String() }

// Ping reports readiness: the database answers and its schema is at the
// version this code expects.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return errs.Wrap(errs.KindUnavailable, err, "database unreachable")
	}
	version, err := schemaVersion(ctx, s.db, analyticsComponent)
	if err != nil {
		return errs.Wrap(errs.KindUnavailable, err, "database schema unreadable")
	}
	if want := latestVersion(analyticsMigrations); version != want {
		return errs.New(errs.KindUnavailable, "database schema at version %d, expected %d", version, want)
	}
	return nil
}

// DB returns the database handle, for sibling adapters that keep their own
// tables in the same database (they bring their schema with Migrate).
func (s *Store) DB() *bun.DB { return s.db }

// Rollups returns the rollup store kept in step with this log.
func (s *Store) Rollups() *Rollups { return &Rollups{store: s} }

func internal(err error) error {
	return Failed(err, "analytics store failed")
}
