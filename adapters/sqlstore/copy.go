package sqlstore

import (
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/catsrv/catsrv/core/analytics"
)

// copyBatchRows is how many rows one COPY carries.
const copyBatchRows = 8192

// copyRaw writes a batch of raw rows on PostgreSQL with COPY, in the
// binary format: the server inserts them many to a page and WAL record,
// where INSERT goes row by row and parses every value. COPY runs on the
// transaction's own connection (the session is the transaction), between
// the writer's other statements.
func (w *writer) copyRaw(batch []analytics.Interaction, dims [][]byte) error {
	err := w.conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return errors.New("COPY needs a pgx connection")
		}
		_, err := c.Conn().CopyFrom(w.ctx, pgx.Identifier{"interactions"}, rawColumns, &rawSource{batch: batch, dims: dims, row: -1})
		return err
	})
	if err != nil {
		return internal(err)
	}
	return nil
}

// rawSource feeds a batch to CopyFrom, one reused slice of values per row.
type rawSource struct {
	batch  []analytics.Interaction
	dims   [][]byte
	row    int
	values [13]any
}

func (r *rawSource) Next() bool {
	r.row++
	return r.row < len(r.batch)
}

func (r *rawSource) Values() ([]any, error) {
	i := &r.batch[r.row]
	v := &r.values
	v[0], v[1], v[2], v[3], v[4] = i.Time.UTC().Truncate(time.Microsecond), i.Cat, i.EventKind, i.Question, i.Answer
	v[5], v[6], v[7], v[8], v[9] = i.Topic, i.Model, i.Persona, i.QuestionID, i.AnswerID
	v[10], v[11] = i.UserID, i.ConversationID
	if d := r.dims[r.row]; d != nil {
		v[12] = d
	} else {
		v[12] = nil // NULL for rows never counted
	}
	return v[:], nil
}

func (r *rawSource) Err() error { return nil }
