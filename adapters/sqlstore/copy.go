package sqlstore

import (
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// copyBatchRows is how many rows one COPY carries.
const copyBatchRows = 8192

// rawSource gives a batch's rows to COPY in rawColumns order, one reused
// slice of values per row.
type rawSource struct {
	batch  []analytics.Interaction
	dims   [][]byte
	row    int
	values [14]any
}

func (r *rawSource) Values() ([]any, error) {
	i := &r.batch[r.row]
	v := &r.values
	v[0], v[1], v[2], v[3], v[4] = i.Time.UTC().Truncate(time.Microsecond), i.Cat, i.EventKind, i.Question, i.Answer
	v[5], v[6], v[7], v[8], v[9] = i.Topic, i.Model, i.Persona, i.QuestionID, i.AnswerID
	v[10], v[11], v[12] = i.UserID, i.ConversationID, interactionIDArg(*i)
	if d := r.dims[r.row]; d != nil {
		v[13] = d
	} else {
		v[13] = nil // NULL for rows never counted
	}
	return v[:], nil
}
