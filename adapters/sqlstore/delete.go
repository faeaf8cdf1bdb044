package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

// Deletion (retention and erasure) removes raw rows a batch at a time, each
// batch one WriteTx that rebuilds the dims_blocks of every (CAT, UTC day)
// that lost api rows from the rows left, and records those CATs in
// interaction_deletions, the deletion feed (colindex.Deletions) the column
// index polls. At the end the dictionary entries only deleted rows used go
// too (deletegc.go), so no erased text stays behind.

var (
	_ ports.InteractionEraser = (*Store)(nil)
)

// DefaultDeleteBatch is how many interactions a deletion removes per
// transaction when its caller names no batch size.
const DefaultDeleteBatch = 1000

// deletionsComponent names the deletion feed's schema in
// schema_migrations: a component of its own, so that its steps never
// collide with the analytics schema's.
const deletionsComponent = "analytics_deletions"

var deletionMigrations = []Migration{
	{Version: 1, Name: "the deletion feed", Statements: func(name string) []string {
		serial := "INTEGER PRIMARY KEY"
		if dialectNamed(name) == postgresDialect {
			serial = "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
		}
		return []string{`CREATE TABLE interaction_deletions (
			generation ` + serial + `,
			cat TEXT NOT NULL,
			api_rows BIGINT NOT NULL
		)`}
	}},
	{Version: 2, Name: "the count of dictionary collections", Statements: func(string) []string {
		// Counted by collections (deletegc.go), read by older releases.
		return []string{
			`CREATE TABLE dictionary_collections (id INTEGER PRIMARY KEY, collections BIGINT NOT NULL)`,
			`INSERT INTO dictionary_collections (id, collections) VALUES (1, 0)`,
		}
	}},
}

// DeleteInteractions deletes the interactions d selects, in id order, at
// most batch per transaction (batch <= 0: DefaultDeleteBatch), until none
// is left or ctx ends (ports.InteractionEraser).
func (s *Store) DeleteInteractions(ctx context.Context, d analytics.Deletion, batch int) (int, error) {
	if err := d.Validate(); err != nil {
		return 0, err
	}
	if batch <= 0 {
		batch = DefaultDeleteBatch
	}
	total := 0
	dead := newDeadCodes()
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		var n int
		err := s.WriteTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			if err := s.excludeWriters(ctx, tx); err != nil {
				return err
			}
			// WriteTx may run fn again: collect the codes of the attempt
			// that commits only.
			attempt := newDeadCodes()
			var err error
			n, err = s.deleteBatch(ctx, tx.Tx, d, batch, attempt)
			if err == nil {
				dead.merge(attempt)
			}
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		if n > 0 && s.hooks != nil && s.hooks.afterDeleteBatch != nil {
			s.hooks.afterDeleteBatch()
		}
		if dead.n > 0 && (n < batch || dead.n >= gcMaxCodes) {
			if err := s.WriteTx(ctx, func(ctx context.Context, tx bun.Tx) error {
				if err := s.excludeWriters(ctx, tx); err != nil {
					return err
				}
				return s.collect(ctx, tx.Tx, dead)
			}); err != nil {
				return total, err
			}
			dead = newDeadCodes()
		}
		if n < batch {
			return total, nil
		}
	}
}

// deleteBatch deletes the first (at most) limit rows d selects in tx and
// rebuilds the blocks of the days they leave.
func (s *Store) deleteBatch(ctx context.Context, tx *sql.Tx, d analytics.Deletion, limit int, dead *deadCodes) (int, error) {
	ids, touched, err := s.selectDeleted(ctx, tx, d, limit, dead)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	selected := len(ids)
	ph := s.dialect.placeholders
	if s.dialect == sqliteDialect {
		if ids, err = s.keepHighest(ctx, tx, ids); err != nil {
			return 0, err
		}
	}
	for rest := ids; len(rest) > 0; {
		chunk := rest[:min(len(rest), batchRows(s.dialect, 1))]
		rest = rest[len(chunk):]
		args := make([]any, len(chunk))
		for k, id := range chunk {
			args[k] = id
		}
		//nolint:gosec // fixed SQL text; the values are bound
		if _, err := tx.ExecContext(ctx, "DELETE FROM interactions WHERE id IN ("+ph(1, len(chunk))+")", args...); err != nil {
			return 0, internal(err)
		}
	}
	lost := map[string]int64{}
	for _, k := range touched.keys() {
		if err := s.rebuildDay(ctx, tx, k); err != nil {
			return 0, err
		}
		lost[k.cat] += touched[k]
	}
	cats := make([]string, 0, len(lost))
	for cat := range lost {
		cats = append(cats, cat)
	}
	slices.Sort(cats)
	for _, cat := range cats {
		//nolint:gosec // fixed SQL text; the values are bound
		if _, err := tx.ExecContext(ctx, "INSERT INTO interaction_deletions (cat, api_rows) VALUES ("+ph(1, 2)+")", cat, lost[cat]); err != nil {
			return 0, internal(err)
		}
	}
	return selected, nil
}

// dayCounts counts deleted api rows per CAT and UTC day.
type dayCounts map[blockKey]int64

// keys returns the days in a fixed order.
func (c dayCounts) keys() []blockKey {
	out := make([]blockKey, 0, len(c))
	for k := range c {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b blockKey) int {
		if c := strings.Compare(a.cat, b.cat); c != 0 {
			return c
		}
		return int(a.day - b.day)
	})
	return out
}

// selectDeleted returns the ids of the first (at most) limit rows d
// selects and the days of the api rows among them.
func (s *Store) selectDeleted(ctx context.Context, tx *sql.Tx, d analytics.Deletion, limit int, dead *deadCodes) ([]int64, dayCounts, error) {
	var (
		where []string
		args  []any
	)
	ph := func() string { return s.dialect.placeholders(len(args), 1) }
	if d.Cat != "" {
		args = append(args, d.Cat)
		where = append(where, "cat = "+ph())
	}
	if !d.Before.IsZero() {
		args = append(args, s.dialect.timeArg(d.Before))
		where = append(where, "occurred_at < "+ph())
	}
	if d.UserID != "" {
		args = append(args, d.UserID)
		where = append(where, "user_id = "+ph())
	}
	// Never a tombstone (keepHighest): no stored interaction has an empty
	// event kind (Interaction.Validate).
	where = append(where, "event_kind <> ''")
	args = append(args, limit)
	//nolint:gosec // fixed SQL text; the values are bound
	query := "SELECT id, cat, " + s.microsExpr() + ", event_kind, dims FROM interactions WHERE " +
		strings.Join(where, " AND ") + " ORDER BY id LIMIT " + ph()
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, internal(err)
	}
	defer rows.Close()
	var ids []int64
	touched := dayCounts{}
	for rows.Next() {
		var (
			id     int64
			cat    string
			micros int64
			kind   string
			dims   []byte
		)
		if err := rows.Scan(&id, &cat, &micros, &kind, &dims); err != nil {
			return nil, nil, internal(err)
		}
		ids = append(ids, id)
		if kind == analytics.EventKindAPI {
			touched[blockKey{cat: cat, day: dayOf(time.UnixMicro(micros))}]++
			if err := dead.add(cat, dims); err != nil {
				return nil, nil, internal(err)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, internal(err)
	}
	return ids, touched, nil
}

// microsExpr is the row's time in microseconds since the Unix epoch.
func (s *Store) microsExpr() string {
	if s.dialect == postgresDialect {
		return "CAST(EXTRACT(EPOCH FROM occurred_at) * 1000000 AS BIGINT)"
	}
	return "occurred_at"
}

// rebuildDay replaces the blocks of one CAT's UTC day by those
// of the api rows that remain on it.
func (s *Store) rebuildDay(ctx context.Context, tx *sql.Tx, k blockKey) error {
	w := newWriter(ctx, tx, s.dialect)
	defer w.close()
	if err := s.readDay(ctx, tx, k, w); err != nil {
		return err
	}
	ph := s.dialect.placeholders
	//nolint:gosec // fixed SQL text; the values are bound
	if _, err := tx.ExecContext(ctx, "DELETE FROM dims_blocks WHERE cat = "+ph(1, 1)+" AND day = "+ph(2, 1), k.cat, k.day); err != nil {
		return internal(err)
	}
	return w.flushBlocks()
}

// readDay gathers the blocks of the api rows of one CAT's UTC
// day in w, to be written once the old ones are gone.
func (s *Store) readDay(ctx context.Context, tx *sql.Tx, k blockKey, w *writer) error {
	ph := s.dialect.placeholders
	start := time.UnixMicro(k.day * dayMicros).UTC()
	//nolint:gosec // fixed SQL text; the values are bound
	query := "SELECT " + s.microsExpr() + ", dims" + usageBlockColumns + " FROM interactions WHERE cat = " + ph(1, 1) +
		" AND event_kind = 'api' AND occurred_at >= " + ph(2, 1) + " AND occurred_at < " + ph(3, 1) + " ORDER BY id"
	rows, err := tx.QueryContext(ctx, query, k.cat, s.dialect.timeArg(start), s.dialect.timeArg(start.AddDate(0, 0, 1)))
	if err != nil {
		return internal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			micros int64
			dims   []byte
			u      blockUsage
		)
		if err := rows.Scan(&micros, &dims, &u.in, &u.out, &u.cost, &u.latency); err != nil {
			return internal(err)
		}
		if !wholeDims(dims) {
			return internal(errCorruptDims)
		}
		w.blocks.add(k.cat, time.UnixMicro(micros).UTC(), dims, u)
	}
	if err := rows.Err(); err != nil {
		return internal(err)
	}
	return nil
}

// ReadDeletions reports the deletions committed after the generation
// after (colindex.Deletions): the highest generation (after itself when
// none) and the CATs that lost api rows in them, sorted.
func (s *Store) ReadDeletions(ctx context.Context, after int64) (int64, []string, error) {
	return s.readGenerations(ctx, "interaction_deletions", after)
}

// readGenerations reads a generation table (interaction_deletions,
// rating_changes) above after: its highest generation (after itself when
// none) and the CATs of those rows, sorted.
func (s *Store) readGenerations(ctx context.Context, table string, after int64) (int64, []string, error) {
	//nolint:gosec // the table is one of two constants; the value is bound
	query := "SELECT generation, cat FROM " + table + " WHERE generation > " + s.dialect.placeholders(1, 1) +
		" ORDER BY generation"
	rows, err := s.db.DB.QueryContext(ctx, query, after)
	if err != nil {
		return after, nil, internal(err)
	}
	defer rows.Close()
	gen, cats := after, []string(nil)
	for rows.Next() {
		var cat string
		if err := rows.Scan(&gen, &cat); err != nil {
			return after, nil, internal(err)
		}
		if !slices.Contains(cats, cat) {
			cats = append(cats, cat)
		}
	}
	if err := rows.Err(); err != nil {
		return after, nil, internal(err)
	}
	slices.Sort(cats)
	return gen, cats, nil
}

// keepHighest keeps SQLite from handing out again the highest id, which a
// follower of the ids has seen (a rowid table numbers a new row highest id
// plus one): when the batch deletes it, that row is blanked into a
// tombstone (empty event kind) that nothing selects, and the previous
// tombstone goes. PostgreSQL's identity column never reuses an id.
func (s *Store) keepHighest(ctx context.Context, tx *sql.Tx, ids []int64) ([]int64, error) {
	var highest int64
	if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM interactions").Scan(&highest); err != nil {
		return nil, internal(err)
	}
	if !slices.Contains(ids, highest) {
		return ids, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE interactions SET cat = '', event_kind = '', question = '', answer = '',
		topic = '', model = '', persona = '', question_id = '', answer_id = '', user_id = '', conversation_id = '', dims = NULL, interaction_id = NULL,
		feedback_rating = 0, feedback_reason = '', feedback_comment = ''
		WHERE id = ?`, highest); err != nil {
		return nil, internal(err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM interactions WHERE event_kind = '' AND id < ?", highest); err != nil {
		return nil, internal(err)
	}
	return slices.DeleteFunc(ids, func(id int64) bool { return id == highest }), nil
}

// excludeWriters makes a deletion's transaction the only writer of the
// interactions on PostgreSQL, whose writers otherwise commit concurrently
// (each holds the table in ROW EXCLUSIVE mode, feedorder.go): a row
// committed beside a deletion could miss its rebuilt day or lose a code.
// SHARE ROW EXCLUSIVE conflicts with ROW EXCLUSIVE and itself; a deadlock
// of two deleters is retried by WriteTx. SQLite has one writer anyway.
func (s *Store) excludeWriters(ctx context.Context, tx bun.Tx) error {
	if s.dialect != postgresDialect {
		return nil
	}
	if _, err := tx.Tx.ExecContext(ctx, "LOCK TABLE interactions IN SHARE ROW EXCLUSIVE MODE"); err != nil {
		return internal(err)
	}
	return nil
}
