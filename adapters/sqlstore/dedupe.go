package sqlstore

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// An interaction id is stored once per CAT: the writer leaves out the
// interactions whose (CAT, id) is already stored or came earlier in the
// same write, before anything of the batch is coded or written. The unique
// index interactions_cat_interaction_id is the backstop against a
// concurrent writer (duplicateID).

// idLookupChunk bounds the ids of one lookup statement; pgIDLookupChunk
// those of one array on PostgreSQL, small enough that the plan's cost
// stays below jit_above_cost (JIT compiling costs more than the lookup).
const (
	idLookupChunk   = 500
	pgIDLookupChunk = 4096
)

// duplicateIndex names the unique index of the interaction ids.
const duplicateIndex = "interactions_cat_interaction_id"

// duplicateMessage is what a client is told when a concurrent write stored
// some of the same interaction ids first.
const duplicateMessage = "another write stored some of these interaction ids at the same time; " +
	"try again: the interactions already stored are skipped"

// interactionIDArg is the stored value of an interaction id: NULL when
// there is none, so the unique index ignores the row.
func interactionIDArg(i analytics.Interaction) any {
	if i.InteractionID == "" {
		return nil
	}
	return i.InteractionID
}

// dedupe returns the interactions of batch (in place, in order) that are
// to be stored, leaving out those whose id came earlier in the batch and,
// when on is set, those on already has, and counts them in w.skipped. A
// PostgreSQL import passes no on: it looks the ids up between COPY
// segments (keepNew).
func (w *writer) dedupe(on sqlRunner, batch []analytics.Interaction) ([]analytics.Interaction, error) {
	stored := map[[2]string]struct{}{}
	if on != nil {
		var err error
		if stored, err = w.storedOf(on, batch); err != nil {
			return nil, err
		}
	}
	if w.ids == nil {
		w.ids = map[[2]string]struct{}{}
	}
	clear(w.ids)
	kept := batch[:0]
	for _, i := range batch {
		if key, ok := i.DedupeKey(); ok {
			_, already := stored[key]
			_, seen := w.ids[key]
			if already || seen {
				w.skipped++
				continue
			}
			w.ids[key] = struct{}{}
		}
		kept = append(kept, i)
	}
	return kept, nil
}

// storedOf returns the (CAT, id) pairs of batch that on already has.
func (w *writer) storedOf(on sqlRunner, batch []analytics.Interaction) (map[[2]string]struct{}, error) {
	byCat := map[string][]string{}
	for _, i := range batch {
		if _, ok := i.DedupeKey(); ok {
			byCat[i.Cat] = append(byCat[i.Cat], i.InteractionID)
		}
	}
	stored := map[[2]string]struct{}{}
	for cat, ids := range byCat {
		chunk := idLookupChunk
		if w.dialect == postgresDialect {
			chunk = pgIDLookupChunk // one array parameter
		}
		for start := 0; start < len(ids); start += chunk {
			if err := w.storedIDs(on, cat, ids[start:min(len(ids), start+chunk)], stored); err != nil {
				return nil, err
			}
		}
	}
	return stored, nil
}

// storedIDs adds to stored the ids among ids that cat already has. On
// PostgreSQL the ids are one array parameter, each looked up on its own in
// the unique index (a LATERAL subquery): with "interaction_id = ANY($2)"
// the planner, whose statistics lag behind a table being filled, may scan
// the whole CAT instead. It is planned at every run (QueryExecModeExec).
func (w *writer) storedIDs(on sqlRunner, cat string, ids []string, stored map[[2]string]struct{}) error {
	var query string
	var args []any
	if w.dialect == postgresDialect {
		query = "SELECT u.id FROM unnest($2::text[]) AS u(id) CROSS JOIN LATERAL (SELECT 1 FROM interactions " +
			"WHERE cat = $1 AND interaction_id = u.id LIMIT 1) AS stored"
		args = []any{pgx.QueryExecModeExec, cat, ids}
	} else {
		//nolint:gosec // fixed SQL text; the values are bound
		query = "SELECT interaction_id FROM interactions WHERE cat = ? AND interaction_id IN (" +
			w.dialect.placeholders(2, len(ids)) + ") AND interaction_id IS NOT NULL"
		args = append(make([]any, 0, len(ids)+1), cat)
		for _, id := range ids {
			args = append(args, id)
		}
	}
	rows, err := on.QueryContext(w.ctx, query, args...)
	if err != nil {
		return internal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return internal(err)
		}
		stored[[2]string{cat, id}] = struct{}{}
	}
	if err := rows.Err(); err != nil {
		return internal(err)
	}
	return nil
}

// duplicateID turns the unique index's refusal of an interaction id (a
// concurrent writer stored it first) into a temporary errs.KindUnavailable
// error: run again, the Append skips what the other stored. Other errors
// are returned as they are.
func duplicateID(err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if (errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == duplicateIndex) ||
		strings.Contains(err.Error(), "UNIQUE constraint failed: interactions.cat, interactions.interaction_id") {
		return errs.Wrap(errs.KindUnavailable, errs.Temporary(err), duplicateMessage)
	}
	return err
}
