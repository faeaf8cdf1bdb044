// Package sqlstore keeps the interaction log in SQL, on SQLite (embedded,
// pure Go) or PostgreSQL, through bun. It answers [ports.InteractionLog]
// and, for whole UTC days, [ports.RollupStore] with one pass over the
// column-wise dictionary codes of the interactions (dims_blocks), written
// in the same transaction as the rows; each answer comes from one
// committed state. The log is also the
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
	"go.opentelemetry.io/otel/trace"

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

// Idle PostgreSQL connections the pool keeps, and how long one stays
// unused before it is closed: as many as concurrent chat turns use, so
// that a turn does not open a new server process.
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
	// writeTurn queues this process's SQLite writers, a one-slot
	// semaphore that a chat turn can stop waiting for (turnWait): SQLite
	// has one writer at a time, and queueing here beats busy_timeout.
	writeTurn chan struct{}
	// localLocks are the job locks of a SQLite database (joblock.go).
	localLocks localLocks
	// reserveWriter is set on a SQLite file: Appends write on writer, a
	// connection kept for them (writerconn.go) and used by the holder of
	// writeTurn only; writerCache is its page cache setting.
	reserveWriter bool
	writer        *sql.Conn
	writerCache   string
	// tell is the follower told of each committed write (tell.go).
	tell atomic.Pointer[func(rows []analytics.FeedRow, givenAt int64, complete bool)]
	// hooks are set by tests only (export_test.go); nil otherwise.
	hooks *testHooks
	// tracer, when set (Traced), makes database calls spans (trace.go).
	tracer trace.Tracer
	// codes and batchInsert spare writes the statements they repeat
	// (codecache.go).
	codes       codeCache
	batchInsert batchStmt
}

// testHooks let tests act at points of a write or a read.
type testHooks struct {
	// beforeCommit runs in WriteTx just before the commit; commit, when
	// set, replaces tx.Commit.
	beforeCommit func(ctx context.Context, tx bun.Tx) error
	commit       func(tx bun.Tx) error
	// passPlanned runs once a raw pass has planned its parts, before it
	// takes more connections.
	passPlanned func()
	// afterDeleteBatch runs after each committed batch of
	// DeleteInteractions.
	afterDeleteBatch func()
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

// BulkWrites sets a store up for large imports: on SQLite the writer
// connection gets a larger page cache. It changes
// nothing on PostgreSQL.
func BulkWrites() Option {
	return func(s *Store) { s.writerCache = bulkWriterCache }
}

// open is Open with the schema steps to bring the database to.
func open(ctx context.Context, dsn string, steps []Migration, opts ...Option) (*Store, error) {
	s, err := connect(ctx, dsn, opts...)
	if err != nil {
		return nil, err
	}
	for _, c := range []struct {
		name  string
		steps []Migration
	}{{analyticsComponent, steps}, {deletionsComponent, deletionMigrations}, {functionsComponent, functionMigrations}} {
		if err := s.Migrate(ctx, c.name, c.steps); err != nil {
			_ = s.db.Close()
			return nil, err
		}
	}
	return s, nil
}

// connect opens the database the DSN names, as it is.
func connect(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	var (
		sqldb *sql.DB
		d     dialect
		err   error
	)
	// The options that the connection itself needs (a tracer), read
	// before it opens; all of them are applied to the Store below.
	pre := &Store{}
	for _, o := range opts {
		o(pre)
	}
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		sqldb, err = openSQLite(strings.TrimPrefix(dsn, "sqlite:"))
		d = sqliteDialect
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		sqldb, err = openPostgres(dsn, pre.tracer)
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
	if s.tracer != nil && d == sqliteDialect {
		db = db.WithQueryHook(bunTracer{s.tracer})
		s.db = db
	}
	if err := ping(ctx, db); err != nil {
		_ = db.Close()
		return nil, errs.Wrap(errs.KindUnavailable, err, "database unreachable")
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
	// Readers get a small page cache each (allocated outside the Go heap,
	// per connection): the raw pass reads each code block once. The
	// writer connection has its own (writerCache).
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

func openPostgres(dsn string, tracer trace.Tracer) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx redacts the password from its own message; ours names none.
		return nil, errs.Wrap(errs.KindInvalid, err, "invalid PostgreSQL DSN")
	}
	forceSessionSettings(cfg)
	if tracer != nil {
		cfg.Tracer = pgxTracer{tracer}
	}
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
	s.batchInsert.close()
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
	want := analyticsMigrations[len(analyticsMigrations)-1].Version
	ok, err := migrated(ctx, s.db, analyticsComponent, want)
	if err != nil {
		return errs.Wrap(errs.KindUnavailable, err, "database schema unreadable")
	}
	if !ok {
		return errs.New(errs.KindUnavailable, "database schema before version %d", want)
	}
	return nil
}

// DB returns the database handle, for sibling adapters that keep their own
// tables in the same database (they bring their schema with Migrate).
func (s *Store) DB() *bun.DB { return s.db }

// Rollups returns the log as a ports.RollupStore (rollups.go).
func (s *Store) Rollups() *Rollups { return &Rollups{store: s} }

func internal(err error) error {
	return Failed(err, "analytics store failed")
}
