package sqlstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/analytics"
)

// Every api row carries its five dictionary codes (topic, model, persona,
// question, answer) as unsigned varints in its dims column (NULL for other
// event kinds): deletions read them to rebuild dims_blocks and collect
// dictionary entries.

// dimsCodes is how many codes a dims value holds.
const dimsCodes = 5

// appendDims appends a row's encoded codes to dst.
func appendDims(dst []byte, codes [dimsCodes]int64) []byte {
	for _, c := range codes {
		dst = binary.AppendUvarint(dst, uint64(c)) // #nosec G115 -- codes are positive
	}
	return dst
}

// wholeDims reports whether d is the codes of one row: dimsCodes positive
// varints.
func wholeDims(d []byte) bool {
	for range dimsCodes {
		v, n := binary.Uvarint(d)
		if n <= 0 || v == 0 {
			return false
		}
		d = d[n:]
	}
	return len(d) == 0
}

// errCorruptDims reports stored codes that do not decode to whole rows of
// positive codes.
var errCorruptDims = errors.New("malformed dictionary codes")

// addDims adds the dims column.
func addDims(d dialect) []string {
	if d == postgresDialect {
		return []string{`ALTER TABLE interactions ADD COLUMN dims BYTEA`}
	}
	return []string{`ALTER TABLE interactions ADD COLUMN dims BLOB`}
}

// backfillBatch is how many rows backfillDims codes per round.
const backfillBatch = 1000

// backfillDims gives the api rows stored before dims existed their codes,
// adding dictionary entries where needed as Append would.
func backfillDims(ctx context.Context, tx bun.Tx, dialectName string) error {
	d := dialectNamed(dialectName)
	w := newWriter(ctx, tx.Tx, d)
	defer w.close()
	var last int64
	for {
		ids, batch, err := rowsWithoutDims(ctx, tx.Tx, d, last)
		if err != nil || len(ids) == 0 {
			return err
		}
		last = ids[len(ids)-1]
		dims, err := w.codeBatch(batch)
		if err != nil {
			return err
		}
		for k, id := range ids {
			query := func() string {
				return "UPDATE interactions SET dims = " + d.placeholders(1, 1) + " WHERE id = " + d.placeholders(2, 1)
			}
			if err := w.exec(stmtKey{"backfill", 1}, query, []any{dims[k], id}); err != nil {
				return err
			}
		}
		w.entries.resetIfLarge()
	}
}

// rowsWithoutDims reads the next api rows after the id that have no dims.
func rowsWithoutDims(ctx context.Context, tx *sql.Tx, d dialect, after int64) ([]int64, []analytics.Interaction, error) {
	//nolint:gosec // fixed SQL text; the values are bound
	query := "SELECT id, cat, topic, model, persona, question_id, question, answer_id, answer FROM interactions" +
		" WHERE id > " + d.placeholders(1, 1) + " AND event_kind = 'api' AND dims IS NULL ORDER BY id LIMIT " +
		d.placeholders(2, 1)
	rows, err := tx.QueryContext(ctx, query, after, backfillBatch)
	if err != nil {
		return nil, nil, internal(err)
	}
	defer rows.Close()
	var (
		ids   []int64
		batch []analytics.Interaction
	)
	for rows.Next() {
		var (
			id int64
			i  analytics.Interaction
		)
		if err := rows.Scan(&id, &i.Cat, &i.Topic, &i.Model, &i.Persona, &i.QuestionID, &i.Question, &i.AnswerID, &i.Answer); err != nil {
			return nil, nil, internal(err)
		}
		i.EventKind = analytics.EventKindAPI
		ids = append(ids, id)
		batch = append(batch, i)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, internal(err)
	}
	return ids, batch, nil
}

// cubeRollups replaces the daily rollups keyed by all five dimensions
// (nearly one row per interaction: questions and answers are too varied
// to roll up) by rollups keyed by topic, model and persona only, a few
// hundred rows a day, carrying the counts over. Question and answer lists
// come from the raw pass (see Rollups).
func cubeRollups(d dialect) []string {
	bigint, withoutRowID := "INTEGER", " WITHOUT ROWID"
	if d == postgresDialect {
		bigint, withoutRowID = "BIGINT", ""
	}
	return []string{
		`CREATE TABLE rollup_cube (
			cat TEXT NOT NULL,
			day ` + bigint + ` NOT NULL,
			topic_code ` + bigint + ` NOT NULL,
			model_code ` + bigint + ` NOT NULL,
			persona_code ` + bigint + ` NOT NULL,
			hits ` + bigint + ` NOT NULL,
			PRIMARY KEY (cat, day, topic_code, model_code, persona_code)
		)` + withoutRowID,
		`INSERT INTO rollup_cube (cat, day, topic_code, model_code, persona_code, hits)
			SELECT cat, day, topic_code, model_code, persona_code, SUM(hits) FROM rollup_daily
			GROUP BY cat, day, topic_code, model_code, persona_code`,
		`DROP TABLE rollup_daily`,
	}
}
