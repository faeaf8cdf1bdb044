package sqltest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
)

// The pool of migrated schemas.
//
// Migrating a fresh PostgreSQL schema (what sqlstore.Open does to the
// empty schema of PostgresDSN, and each Component after it) is a few
// dozen DDL statements, each committed: a tenth of a second of the
// server's CPU or more per test, a hundred times and more per run. So
// Open, given the still empty schema of a PostgresDSN, swaps in a schema
// that an earlier test of this or an earlier run left behind, migrated
// with the same components and then reset, under the same name. The test
// sees what a fresh Open would have made:
//
//   - once per test binary and list of components, a new schema is
//     migrated from empty by sqlstore.Open and the components (so the
//     migrations from an empty schema run, and must pass, in every run)
//     and described: its catalog (tables, columns in
//     order, defaults, indexes, constraints, triggers, functions,
//     sequences, the applied migrations) and the rows and sequence values
//     the migrations left. The description's digest names the pool, so a
//     schema migrated by other code is never handed out;
//   - a test's schema goes back to the pool, when the test ends, only if
//     its catalog is still exactly a reference's: its tables are
//     emptied, the migrations' rows put back and its sequences set back,
//     all in the transaction that renames it into the pool. A schema
//     changed otherwise (a test that drops a table, a migration test) is
//     dropped, as every schema was before;
//   - a pooled schema is taken by renaming it to the test's schema name
//     (after dropping the empty one), under a transaction-level advisory
//     lock, so no two tests get the same one. A test that ran any SQL on
//     its schema before Open, or that opens it with sqlstore.Open
//     directly, gets no swap: the migrations run on it as they always did.
//
// Tables emptied by TRUNCATE get new files, as fresh ones; what a reset
// does not bring back is the planner's statistics of earlier contents.
// Pooled schemas idle for more than poolIdleLimit (of other code, or more
// than the tests needed at once) are dropped when a test binary makes a
// reference.

// PoolEnv is the variable that, set to off, turns the pool off: every
// Open migrates its schema, every schema is dropped.
const PoolEnv = "CATSRV_TEST_POSTGRES_POOL"

// poolPrefix begins the name of every pooled schema:
// catsrv_pool_<digest>_<random>.
const poolPrefix = "catsrv_pool_"

// poolIdleLimit is how long a pooled schema may idle before a test
// binary drops it.
const poolIdleLimit = time.Hour

// poolLockKey is the first key of the advisory locks on pooled schemas.
const poolLockKey = 0x63617473 // "cats"

// poolLockTimeout bounds the waits for locks of the pool's statements: a
// schema some session still locks is dropped instead of pooled.
const poolLockTimeout = "3s"

// bookkeeping are the tables a reset keeps as they are: the applied
// migrations (part of the catalog description instead).
var bookkeeping = map[string]bool{"bun_migrations": true}

// reference is the description of a freshly migrated schema.
type reference struct {
	// digest names the pool: the catalog, the rows and the sequences.
	digest string
	// catalog is the schema's catalog description, with the schema's
	// name replaced by a placeholder.
	catalog string
	// tables are the tables a reset empties (all but bookkeeping).
	tables []string
	// rows are the rows the migrations left, as a JSON array per table.
	rows map[string]string
	// columns are the insertable columns of each table in rows.
	columns map[string][]string
	// sequences are the sequences' states: last_value and is_called.
	sequences map[string]seqState
	// admin is the pool's connection pool to the test server.
	admin *sql.DB
}

type seqState struct {
	last   int64
	called bool
}

// kind is the pool of one list of components: its reference, made once.
type kind struct {
	once sync.Once
	// ref is the reference, nil until made or when it could not be: then
	// every Open of this kind migrates its own schema.
	ref atomic.Pointer[reference]
}

var pool struct {
	// kinds are keyed by the components' names, in order.
	kinds sync.Map // string -> *kind
	// refs are the references made, for release to find a schema's.
	refs sync.Map // catalog string -> *reference
	// admin is a connection pool to the test server for the pool's own
	// statements, kept for the binary's life.
	admin struct {
		once sync.Once
		db   *sql.DB
	}

	mu sync.Mutex
	// fresh are the schemas PostgresDSN made that no Open has seen yet.
	fresh map[string]bool
}

// markFresh records a new empty schema of PostgresDSN.
func markFresh(dsn string) {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if pool.fresh == nil {
		pool.fresh = map[string]bool{}
	}
	pool.fresh[dsn] = true
}

// takeFresh reports whether the DSN names a schema of PostgresDSN that
// no Open has seen yet, and marks it seen.
func takeFresh(dsn string) bool {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if !pool.fresh[dsn] {
		return false
	}
	delete(pool.fresh, dsn)
	return true
}

// forget drops the record of a schema whose test ended.
func forget(dsn string) {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	delete(pool.fresh, dsn)
}

// schemaOf returns the search_path of a PostgresDSN.
func schemaOf(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return ""
	}
	return u.Query().Get("search_path")
}

// swapIn replaces the fresh schema of the DSN by a pooled one, migrated,
// and reports whether it did. Failures only cost the swap (logged): the
// store's own Open then migrates the schema, and reports its errors.
func swapIn(t testing.TB, dsn string, components []Component) bool {
	t.Helper()
	if os.Getenv(PoolEnv) == "off" {
		return false
	}
	key := ""
	for _, c := range components {
		key += "+" + c.Name
	}
	v, _ := pool.kinds.LoadOrStore(key, &kind{})
	k := v.(*kind)
	k.once.Do(func() {
		if ref := makeReference(dsn, components); ref != nil {
			k.ref.Store(ref)
			pool.refs.Store(ref.catalog, ref)
		}
	})
	ref := k.ref.Load()
	if ref == nil {
		return false
	}
	name := schemaOf(dsn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// In random order, so that tests starting together try different ones.
	candidates, err := names(ctx, ref.admin, `SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1) ORDER BY random()`,
		poolPrefix+ref.digest+"_")
	if err != nil {
		t.Logf("sqltest pool: list: %v", err)
		return false
	}
	for _, c := range candidates {
		ok, err := claim(ctx, ref.admin, c, name)
		if err != nil && !errors.Is(err, errNotEmpty) {
			t.Logf("sqltest pool: claim %s: %v", c, err)
		}
		if ok || errors.Is(err, errNotEmpty) {
			return ok
		}
	}
	return false
}

var errNotEmpty = errors.New("the test's schema is no longer empty")

// claim renames the pooled schema c to name, dropping the empty schema of
// that name first, and reports whether it did.
func claim(ctx context.Context, admin *sql.DB, c, name string) (bool, error) {
	tx, err := admin.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "SET LOCAL lock_timeout = '"+poolLockTimeout+"'"); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
		return false, err
	}
	var locked bool
	if err := tx.QueryRowContext(ctx, `SELECT pg_try_advisory_xact_lock($1, hashtext($2))`, poolLockKey, c).Scan(&locked); err != nil || !locked {
		return false, err
	}
	var exists, empty bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = $1),
		NOT EXISTS (SELECT FROM pg_depend WHERE refclassid = 'pg_namespace'::regclass AND refobjid = $2::regnamespace)`, c, name).Scan(&exists, &empty); err != nil {
		return false, err
	}
	if !empty {
		return false, errNotEmpty
	}
	if !exists {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, "DROP SCHEMA "+name); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, "ALTER SCHEMA "+c+" RENAME TO "+name); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// release gives the schema of a test that ended back to the pool, reset,
// and reports whether it did; if not, the caller drops it.
func release(name string) bool {
	admin := adminDB("")
	if admin == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tx, err := admin.BeginTx(ctx, nil)
	if err != nil {
		return false
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "SET LOCAL lock_timeout = '"+poolLockTimeout+"'"); err != nil {
		return false
	}
	// Only the pool waits for this commit: a crash of the server loses
	// at most a pooled schema.
	if _, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
		return false
	}
	catalog, err := describeCatalog(ctx, tx, name)
	if err != nil {
		return false
	}
	v, ok := pool.refs.Load(catalog)
	if !ok {
		return false
	}
	ref := v.(*reference)
	if err := reset(ctx, tx, name, ref); err != nil {
		return false
	}
	target := poolPrefix + ref.digest + "_" + randomHex(6)
	if _, err := tx.ExecContext(ctx, "ALTER SCHEMA "+name+" RENAME TO "+target); err != nil {
		return false
	}
	if _, err := tx.ExecContext(ctx, "COMMENT ON SCHEMA "+target+" IS '"+strconv.FormatInt(time.Now().Unix(), 10)+"'"); err != nil {
		return false
	}
	return tx.Commit() == nil
}

// reset brings the tables and sequences of the schema back to what the
// migrations left.
func reset(ctx context.Context, tx *sql.Tx, schema string, ref *reference) error {
	if len(ref.tables) > 0 {
		// Locked first, so that no late writer adds a row once a table
		// is found empty; then only the tables with rows are emptied
		// (TRUNCATE gives them new files, which costs).
		qualified := make([]string, len(ref.tables))
		exists := make([]string, len(ref.tables))
		for i, tb := range ref.tables {
			qualified[i] = schema + "." + tb
			exists[i] = "CASE WHEN EXISTS (SELECT FROM " + qualified[i] + ") THEN " + strconv.Itoa(i) + " END"
		}
		if _, err := tx.ExecContext(ctx, "LOCK TABLE "+strings.Join(qualified, ", ")+" IN ACCESS EXCLUSIVE MODE"); err != nil {
			return err
		}
		filled, err := names(ctx, tx, "SELECT i::text FROM unnest(ARRAY["+strings.Join(exists, ", ")+"]::int[]) AS i WHERE i IS NOT NULL")
		if err != nil {
			return err
		}
		var truncate []string
		for _, i := range filled {
			k, err := strconv.Atoi(i)
			if err != nil {
				return err
			}
			truncate = append(truncate, qualified[k])
		}
		if len(truncate) > 0 {
			if _, err := tx.ExecContext(ctx, "TRUNCATE "+strings.Join(truncate, ", ")); err != nil {
				return err
			}
		}
	}
	for tb, rows := range ref.rows {
		cols := strings.Join(ref.columns[tb], ", ")
		//nolint:gosec // names from the catalog; the rows are bound
		q := "INSERT INTO " + schema + "." + tb + " (" + cols + ") OVERRIDING SYSTEM VALUE SELECT " + cols +
			" FROM json_populate_recordset(NULL::" + schema + "." + tb + ", $1)"
		if _, err := tx.ExecContext(ctx, q, rows); err != nil {
			return err
		}
	}
	for seq, st := range ref.sequences {
		if _, err := tx.ExecContext(ctx, "SELECT setval($1::regclass, $2, $3)", schema+"."+seq, st.last, st.called); err != nil {
			return err
		}
	}
	return nil
}

// makeReference migrates a new schema with sqlstore.Open, describes it
// and puts it in the pool. Nil means no pool: something failed, and each
// Open migrates its own schema (and reports a failure of the migrations).
func makeReference(dsn string, components []Component) *reference {
	admin := adminDB(dsn)
	if admin == nil {
		return nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := "catsrv_test_" + randomHex(8)
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+name); err != nil {
		return nil
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	s, err := sqlstore.Open(ctx, u.String())
	if err == nil {
		for _, c := range components {
			if err = c.Migrate(ctx, s); err != nil {
				break
			}
		}
		err = errors.Join(err, s.Close())
	}
	if err != nil {
		_, _ = admin.ExecContext(ctx, "DROP SCHEMA "+name+" CASCADE")
		return nil
	}
	ref, err := describe(ctx, admin, name)
	if err == nil {
		_, err = admin.ExecContext(ctx, "ALTER SCHEMA "+name+" RENAME TO "+poolPrefix+ref.digest+"_"+randomHex(6))
	}
	if err != nil {
		_, _ = admin.ExecContext(ctx, "DROP SCHEMA "+name+" CASCADE")
		return nil
	}
	ref.admin = admin
	collect(ctx, admin)
	return ref
}

// adminDB returns the pool's connection pool to the server of the DSN
// (a PostgresDSN), opened by the first call; nil if that failed.
func adminDB(dsn string) *sql.DB {
	pool.admin.once.Do(func() {
		if dsn == "" {
			return
		}
		u, err := url.Parse(dsn)
		if err != nil {
			return
		}
		q := u.Query()
		q.Del("search_path")
		u.RawQuery = q.Encode()
		db, err := sql.Open("pgx", u.String())
		if err != nil {
			return
		}
		db.SetMaxIdleConns(4)
		pool.admin.db = db
	})
	return pool.admin.db
}

// collect drops the pooled schemas idle for longer than poolIdleLimit
// (of other code, or more than the tests needed at once).
func collect(ctx context.Context, admin *sql.DB) {
	stale, err := names(ctx, admin, `SELECT n.nspname FROM pg_namespace n
		WHERE starts_with(n.nspname, $1)
		AND coalesce(obj_description(n.oid, 'pg_namespace'), '0') ~ '^[0-9]+$'
		AND coalesce(obj_description(n.oid, 'pg_namespace'), '0')::bigint < $2`,
		poolPrefix, time.Now().Add(-poolIdleLimit).Unix())
	if err != nil {
		return
	}
	for _, n := range stale {
		tx, err := admin.BeginTx(ctx, nil)
		if err != nil {
			return
		}
		var locked bool
		if tx.QueryRowContext(ctx, `SELECT pg_try_advisory_xact_lock($1, hashtext($2))`, poolLockKey, n).Scan(&locked) == nil && locked {
			if _, err := tx.ExecContext(ctx, "SET LOCAL lock_timeout = '"+poolLockTimeout+"'"); err == nil {
				if _, err := tx.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+n+" CASCADE"); err == nil {
					_ = tx.Commit()
				}
			}
		}
		_ = tx.Rollback()
	}
}

// querier is what describe reads through: the admin pool or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// catalogQuery describes the objects of schema $1, one line each, sorted.
// It finds them through pg_depend and the catalogs' indexes, never by
// scanning pg_class or pg_proc: on a test server without autovacuum,
// those grow with every schema the tests ever made.
const catalogQuery = `WITH ns AS (SELECT $1::regnamespace AS oid),
owned AS (
	SELECT d.classid, d.objid FROM pg_depend d, ns
	WHERE d.refclassid = 'pg_namespace'::regclass AND d.refobjid = ns.oid AND d.refobjsubid = 0
),
rels AS (
	SELECT c.* FROM pg_class c JOIN owned o ON o.classid = 'pg_class'::regclass AND c.oid = o.objid
	UNION ALL
	SELECT c.* FROM pg_index i JOIN owned o ON o.classid = 'pg_class'::regclass AND i.indrelid = o.objid
	JOIN pg_class c ON c.oid = i.indexrelid
)
SELECT coalesce(string_agg(line, E'\n' ORDER BY line), '') FROM (
	SELECT 'schema ' || pg_get_userbyid(n.nspowner) || ' ' || coalesce(n.nspacl::text, '') AS line
		FROM pg_namespace n, ns WHERE n.oid = ns.oid
	UNION ALL
	SELECT 'rel ' || c.relname || ' ' || c.relkind::text || ' ' || c.relpersistence::text || ' ' ||
		coalesce(array_to_string(c.reloptions, ','), '') || ' ' || pg_get_userbyid(c.relowner) || ' ' || coalesce(c.relacl::text, '') || ' ' ||
		c.relrowsecurity || ' ' || c.relforcerowsecurity || ' ' || c.relreplident::text
		FROM rels c
	UNION ALL
	SELECT 'col ' || c.relname || ' ' || a.attnum || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' ||
		a.attnotnull || ' ' || a.attidentity::text || ' ' || a.attgenerated::text || ' ' || coalesce(co.collname, '') || ' ' ||
		a.attstorage::text || ' ' || a.attstattarget || ' ' || coalesce(a.attacl::text, '') || ' ' ||
		coalesce(pg_get_expr(d.adbin, d.adrelid), '')
		FROM rels c JOIN pg_attribute a ON a.attrelid = c.oid
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		LEFT JOIN pg_collation co ON co.oid = a.attcollation AND a.attcollation <> 0
		WHERE a.attnum > 0 AND NOT a.attisdropped
	UNION ALL
	SELECT 'idx ' || pg_get_indexdef(i.indexrelid) || ' ' || i.indisvalid || ' ' || i.indisclustered || ' ' || i.indisreplident
		FROM rels c JOIN pg_index i ON i.indexrelid = c.oid
	UNION ALL
	SELECT 'con ' || c.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid)
		FROM rels c JOIN pg_constraint k ON k.conrelid = c.oid
	UNION ALL
	SELECT 'trg ' || pg_get_triggerdef(g.oid) || ' ' || g.tgenabled::text
		FROM rels c JOIN pg_trigger g ON g.tgrelid = c.oid WHERE NOT g.tgisinternal
	UNION ALL
	SELECT 'rule ' || pg_get_ruledef(r.oid) || ' ' || r.ev_enabled::text
		FROM rels c JOIN pg_rewrite r ON r.ev_class = c.oid
	UNION ALL
	SELECT 'pol ' || c.relname || ' ' || p.polname || ' ' || p.polcmd::text || ' ' || coalesce(pg_get_expr(p.polqual, p.polrelid), '')
		FROM rels c JOIN pg_policy p ON p.polrelid = c.oid
	UNION ALL
	SELECT 'seq ' || c.relname || ' ' || format_type(s.seqtypid, NULL) || ' ' || s.seqstart || ' ' || s.seqincrement || ' ' ||
		s.seqmax || ' ' || s.seqmin || ' ' || s.seqcache || ' ' || s.seqcycle
		FROM rels c JOIN pg_sequence s ON s.seqrelid = c.oid
	UNION ALL
	SELECT 'fn ' || CASE WHEN p.prokind IN ('f', 'p', 'w') THEN pg_get_functiondef(p.oid) ELSE p.proname || ' ' || p.prokind::text END ||
		' ' || pg_get_userbyid(p.proowner) || ' ' || coalesce(p.proacl::text, '')
		FROM owned o JOIN pg_proc p ON o.classid = 'pg_proc'::regclass AND p.oid = o.objid
	UNION ALL
	SELECT 'type ' || t.typname || ' ' || t.typtype::text || ' ' || coalesce((SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
		FROM pg_enum e WHERE e.enumtypid = t.oid), '')
		FROM owned o JOIN pg_type t ON o.classid = 'pg_type'::regclass AND t.oid = o.objid
	UNION ALL
	SELECT 'dep ' || o.classid::regclass::text || ' ' || count(*) FROM owned o
		WHERE o.classid NOT IN ('pg_class'::regclass, 'pg_proc'::regclass, 'pg_type'::regclass) GROUP BY o.classid
) lines`

// describeCatalog returns the catalog description of the schema, with its
// name replaced by a placeholder, and the applied migrations.
func describeCatalog(ctx context.Context, db querier, schema string) (string, error) {
	var catalog string
	if err := db.QueryRowContext(ctx, catalogQuery, schema).Scan(&catalog); err != nil {
		return "", err
	}
	var migrations string
	if err := db.QueryRowContext(ctx, `SELECT coalesce(string_agg(name || ' ' || group_id, ',' ORDER BY id), '') FROM `+
		schema+`.bun_migrations`).Scan(&migrations); err != nil {
		return "", err
	}
	return strings.ReplaceAll(catalog, schema, "<schema>") + "\nmigrations " + migrations, nil
}

// describe describes a freshly migrated schema.
func describe(ctx context.Context, db *sql.DB, schema string) (*reference, error) {
	catalog, err := describeCatalog(ctx, db, schema)
	if err != nil {
		return nil, err
	}
	ref := &reference{catalog: catalog, rows: map[string]string{}, columns: map[string][]string{}, sequences: map[string]seqState{}}
	rels, err := names(ctx, db, `SELECT relname || ' ' || relkind::text FROM pg_class
		WHERE relnamespace = $1::regnamespace AND relkind IN ('r', 'p', 'S') ORDER BY relname`, schema)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	h.Write([]byte(catalog))
	for _, rel := range rels {
		tb, kind, _ := strings.Cut(rel, " ")
		if kind == "S" {
			var st seqState
			if err := db.QueryRowContext(ctx, "SELECT last_value, is_called FROM "+schema+"."+tb).Scan(&st.last, &st.called); err != nil {
				return nil, err
			}
			ref.sequences[tb] = st
			fmt.Fprintf(h, "\nseq %s %d %t", tb, st.last, st.called)
			continue
		}
		if bookkeeping[tb] {
			continue
		}
		ref.tables = append(ref.tables, tb)
		var rows string
		var n int
		if err := db.QueryRowContext(ctx, "SELECT coalesce(json_agg(t), '[]')::text, count(*) FROM "+schema+"."+tb+" t").Scan(&rows, &n); err != nil {
			return nil, err
		}
		if n == 0 {
			continue
		}
		cols, err := names(ctx, db, `SELECT attname FROM pg_attribute
			WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`, schema+"."+tb)
		if err != nil {
			return nil, err
		}
		ref.rows[tb] = rows
		ref.columns[tb] = cols
		fmt.Fprintf(h, "\nrows %s %s", tb, rows)
	}
	ref.digest = hex.EncodeToString(h.Sum(nil))[:16]
	return ref, nil
}

// names runs a query of one text column.
func names(ctx context.Context, db querier, query string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
