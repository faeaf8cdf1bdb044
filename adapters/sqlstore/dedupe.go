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
// interactions of a batch whose (CAT, id) is already stored or came
// earlier in the same Append, before anything of the batch is coded,
// rolled up or written, so the rollups, the blocks and every follower of
// the log see only the rows stored. The unique index
// interactions_cat_interaction_id (migration 5) is the backstop: a
// concurrent writer that stores one of the ids first makes the insert
// fail, and the whole Append with it (duplicateID).

// idLookupChunk bounds the ids of one lookup statement.
const idLookupChunk = 500

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
// to be stored, looking up the ids already stored on on, and counts the
// others in w.skipped. With the transaction as on (w.conn nil), earlier
// batches of the same Append are visible to the lookup, so w.ids only
// needs the batch's own ids; a pipelined PostgreSQL import looks up on
// another connection and keeps every id it stored.
func (w *writer) dedupe(on sqlRunner, batch []analytics.Interaction) ([]analytics.Interaction, error) {
	byCat := map[string][]string{}
	if w.conn == nil {
		clear(w.ids)
	}
	for _, i := range batch {
		if key, ok := i.DedupeKey(); ok {
			if _, seen := w.ids[key]; !seen {
				byCat[i.Cat] = append(byCat[i.Cat], i.InteractionID)
			}
		}
	}
	if len(byCat) == 0 && len(w.ids) == 0 {
		return batch, nil
	}
	if w.ids == nil {
		w.ids = map[[2]string]struct{}{}
	}
	stored := map[[2]string]struct{}{}
	for cat, ids := range byCat {
		chunk := idLookupChunk
		if w.dialect == postgresDialect {
			chunk = len(ids) // one array parameter
		}
		for start := 0; start < len(ids); start += chunk {
			if err := w.storedIDs(on, cat, ids[start:min(len(ids), start+chunk)], stored); err != nil {
				return nil, err
			}
		}
	}
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

// storedIDs adds to stored the ids among ids that cat already has. On
// PostgreSQL the ids are one array parameter and the statement is planned
// for its values at every run (an unnamed statement, pgx's
// QueryExecModeExec): a cached prepared statement gets a generic plan
// after five runs, which can search the index by CAT alone (or not at
// all) and read every row of the CAT, taking hundreds of milliseconds.
func (w *writer) storedIDs(on sqlRunner, cat string, ids []string, stored map[[2]string]struct{}) error {
	var query string
	var args []any
	if w.dialect == postgresDialect {
		query = "SELECT interaction_id FROM interactions WHERE cat = $1 AND interaction_id = ANY($2) AND interaction_id IS NOT NULL"
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
