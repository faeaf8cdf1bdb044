package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// A follower in this process (the column index) is told of the api rows
// each of the store's write transactions committed (TellCommits),
// with their ids, before the write returns: it counts them at once,
// instead of reading them back from the feed. The rows' feed position
// (GivenAt) tells the follower whether a read of the feed has given them
// already: on SQLite, where one writer commits at a time and ids only
// grow, the highest id among them; on PostgreSQL, where the feed reads
// below a transaction horizon (feedorder.go), the transaction's id plus
// one.

// On SQLite the follower is told within the writer turn,
// so in commit order, which for rows logged as they happen is time
// order: two concurrent batches told the other way round would make the
// earlier one's rows late ones for the index to sort in (a rebuild of the
// CAT's columns, whose cost grows with the CAT). PostgreSQL writers commit
// concurrently, with no order to keep; they tell after the commit.

// heldMax bounds the rows one transaction hands over: past it (an
// import) the follower is told only that the transaction committed, and
// reads its rows from the feed.
const heldMax = copyBatchRows

// held gathers what a write transaction tells the follower.
type held struct {
	rows     []analytics.FeedRow
	givenAt  int64
	overflow bool
}

// TellCommits makes every later commit of Append and WriteTx that wrote
// api rows call fn, on the writer's goroutine, before the write returns:
// the rows with their ids (the follower's to keep), the feed position
// from which ReadSince has given them all, and complete false (no rows)
// for a transaction with too many rows to hand over. nil stops telling.
func (s *Store) TellCommits(fn func(rows []analytics.FeedRow, givenAt int64, complete bool)) {
	if fn == nil {
		s.tell.Store(nil)
		return
	}
	s.tell.Store(&fn)
}

// newHeld returns what a write transaction gathers its rows in, nil when
// no follower is told.
func (s *Store) newHeld() *held {
	if s.tell.Load() == nil {
		return nil
	}
	return &held{}
}

// told tells the follower, if any, of a committed transaction's rows.
func (s *Store) told(h *held) {
	fn := s.tell.Load()
	if fn == nil || h == nil || (len(h.rows) == 0 && !h.overflow) {
		return
	}
	(*fn)(h.rows, h.givenAt, !h.overflow)
}

// lose marks the transaction's rows as not handed over (the COPY
// pipeline of an import writes them without ids).
func (h *held) lose() {
	if h != nil {
		h.overflow, h.rows = true, nil
	}
}

// add gathers the api rows of a batch just inserted, ids[k] being the id
// of batch[k]; xactPos is their feed position on PostgreSQL, 0 on SQLite,
// where it is the highest id of an api row (the feed's position is the
// last api row it gave, see readFeed).
func (h *held) add(batch []analytics.Interaction, ids []int64, xactPos int64) {
	h.givenAt = max(h.givenAt, xactPos)
	// The rows' texts share one allocation.
	size := 0
	for _, i := range batch {
		if i.Counted() {
			size += len(i.Cat) + len(i.Topic) + len(i.Model) + len(i.Persona) +
				len(i.QuestionID) + len(i.Question) + len(i.AnswerID) + len(i.Answer)
		}
	}
	buf := make([]byte, 0, size)
	field := func(v string) []byte {
		buf = append(buf, v...)
		return buf[len(buf)-len(v) : len(buf) : len(buf)]
	}
	for k, i := range batch {
		if !i.Counted() {
			continue
		}
		if xactPos == 0 {
			h.givenAt = max(h.givenAt, ids[k])
		}
		if h.overflow {
			continue
		}
		if len(h.rows) == heldMax {
			h.lose()
			continue
		}
		u := usageOf(&i)
		h.rows = append(h.rows, analytics.FeedRow{
			ID: ids[k], Micros: i.Time.UTC().Truncate(time.Microsecond).UnixMicro(),
			Cat: field(i.Cat), Topic: field(i.Topic), Model: field(i.Model), Persona: field(i.Persona),
			QuestionID: field(i.QuestionID), Question: field(i.Question),
			AnswerID: field(i.AnswerID), Answer: field(i.Answer),
			InputTokens: u.in, OutputTokens: u.out, CostNanos: u.cost, LatencyBucket: u.latency,
			Rating: analytics.RatingCode(i.Feedback.Rating),
		})
	}
}

// attempt is what one attempt of WriteTx shares with the AppendTx calls
// of its fn: the rows they wrote, for the follower once the transaction
// has committed (settled).
type attempt struct {
	held *held // nil when no follower is told
	// learned are the codes its writes learned at counter collections,
	// cached once it commits (codecache.go).
	collections int64
	learned     []learnedCode
}

// attemptKey carries a WriteTx attempt to the AppendTx calls of its fn.
type attemptKey struct{}

func withAttempt(ctx context.Context, a *attempt) context.Context {
	return context.WithValue(ctx, attemptKey{}, a)
}

// attemptFrom returns the WriteTx attempt ctx belongs to, nil outside one.
func attemptFrom(ctx context.Context) *attempt {
	a, _ := ctx.Value(attemptKey{}).(*attempt)
	return a
}

// settled hands a committed attempt's rows to the follower (in commit
// order, see above).
func (s *Store) settled(a *attempt) {
	s.codes.learn(a.collections, a.learned)
	s.told(a.held)
}

// insertReturning runs the multi-row insert of raw rows and returns the
// ids of the rows, in order, and on PostgreSQL their feed position (see
// above; 0 on SQLite).
func (w *writer) insertReturning(batch []analytics.Interaction, key stmtKey, query func() string, args []any) ([]int64, int64, error) {
	ids := make([]int64, len(batch))
	if w.dialect == postgresDialect {
		// PostgreSQL returns the rows of an INSERT … VALUES in the order
		// of the list.
		rows, err := w.tx.QueryContext(w.ctx, query()+" RETURNING id, xact", args...)
		if err != nil {
			return nil, 0, internal(err)
		}
		defer rows.Close()
		var xact int64
		k := 0
		for rows.Next() {
			if k == len(ids) {
				return nil, 0, internal(errUnexpectedRows)
			}
			if err := rows.Scan(&ids[k], &xact); err != nil {
				return nil, 0, internal(err)
			}
			k++
		}
		if err := rows.Err(); err != nil {
			return nil, 0, internal(err)
		}
		if k != len(ids) {
			return nil, 0, internal(errUnexpectedRows)
		}
		return ids, xact + 1, nil
	}
	res, err := execResult(w.ctx, w.tx, w.stmts, key, query, args)
	if err != nil {
		return nil, 0, err
	}
	last, err := res.LastInsertId()
	if err != nil {
		return nil, 0, internal(err)
	}
	// SQLite numbers the rows of one insert consecutively, each the
	// highest id plus one (one writer at a time: nothing interleaves).
	for k := range ids {
		ids[k] = last - int64(len(ids)-1-k)
	}
	return ids, 0, nil
}

// errUnexpectedRows is an insert that returned another number of rows
// than it was given.
var errUnexpectedRows = errors.New("the insert returned an unexpected number of ids")
