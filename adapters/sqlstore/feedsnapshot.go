package sqlstore

import (
	"context"
	"fmt"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

var _ ports.FeedSnapshot = (*Store)(nil)

// ReadSnapshot is the fast first read of the feed (ports.FeedSnapshot):
// the api rows of one committed state decoded from dims_blocks, their
// codes looked up in the five dictionaries read whole once, instead of
// every row's texts from interactions. At 10M rows that is some 100 MB of
// blocks and the distinct texts only, against 10M rows of texts.
//
// The state is one read transaction (REPEATABLE READ on PostgreSQL, a
// deferred read transaction on SQLite: see beginRead). On SQLite the
// position is the state's newest id: ids commit in order, so ReadSince
// from there gives exactly the later rows. On PostgreSQL it is the feed
// horizon (feedorder.go) taken just before the transaction began: every
// transaction below it had ended, so the state holds all its rows, and
// ReadSince from it gives every later one; but the state may also hold
// rows of transactions above the horizon that committed before it began
// (while an older writer was still running), which ReadSince will give
// again: those are returned as given, read in the same transaction (few:
// the rows committed while the oldest running writer runs).
func (s *Store) ReadSnapshot(ctx context.Context, fn func(*ports.FeedRow) error) (int64, map[int64]string, error) {
	var horizon int64
	if s.dialect == postgresDialect {
		if err := s.db.DB.QueryRowContext(ctx, feedHorizon).Scan(&horizon); err != nil {
			return 0, nil, internal(err)
		}
	}
	tx, err := s.beginRead(ctx, s.db.DB)
	if err != nil {
		return 0, nil, internal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var (
		position int64
		given    = map[int64]string{}
	)
	if s.dialect == postgresDialect {
		position = horizon
		if err := readGiven(ctx, tx, horizon, given); err != nil {
			return 0, nil, err
		}
	} else if err := tx.QueryRowContext(ctx, newestRow).Scan(&position); err != nil {
		return 0, nil, internal(err)
	}
	var dicts [dimsCodes]snapshotDict
	for d := range dicts {
		if err := dicts[d].read(ctx, tx, dictionaryTables[d]); err != nil {
			return 0, nil, err
		}
	}
	if err := readSnapshotBlocks(ctx, tx, &dicts, fn); err != nil {
		return 0, nil, err
	}
	return position, given, nil
}

// readGiven reads the ids and CATs of the api rows of transactions from
// the horizon on that the transaction's state holds.
func readGiven(ctx context.Context, q queryer, horizon int64, given map[int64]string) error {
	rows, err := q.QueryContext(ctx, "SELECT id, cat FROM interactions WHERE event_kind = $1 AND xact >= $2",
		analytics.EventKindAPI, horizon)
	if err != nil {
		return internal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id  int64
			cat string
		)
		if err := rows.Scan(&id, &cat); err != nil {
			return internal(err)
		}
		given[id] = cat
	}
	if err := rows.Err(); err != nil {
		return internal(err)
	}
	return nil
}

// readSnapshotBlocks decodes every block of the transaction's state into
// rows for fn, in the primary key's order (so mostly in time order, which
// the index adds fastest).
func readSnapshotBlocks(ctx context.Context, q queryer, dicts *[dimsCodes]snapshotDict, fn func(*ports.FeedRow) error) error {
	rows, err := q.QueryContext(ctx, "SELECT cat, day, data FROM dims_blocks ORDER BY cat, day, block")
	if err != nil {
		return internal(err)
	}
	defer rows.Close()
	var (
		r       ports.FeedRow
		cat     []byte
		data    []byte
		day     int64
		lookErr error
	)
	for rows.Next() {
		if err := rows.Scan(&cat, &day, &data); err != nil {
			return internal(err)
		}
		r.Cat = cat
		var fnErr error
		_, err := eachBlockRow(day, data, func(micros int64, codes *[dimsCodes]uint64) {
			if fnErr != nil || lookErr != nil {
				return
			}
			r.Micros = micros
			r.Codes = *codes
			var keys, texts [dimsCodes][]byte
			for d, c := range codes {
				k, t, ok := dicts[d].entry(c)
				if !ok {
					lookErr = fmt.Errorf("code %d of %s not in its dictionary", c, dictionaryTables[d])
					return
				}
				keys[d], texts[d] = k, t
			}
			r.Topic, r.Model, r.Persona = keys[analytics.Topic], keys[analytics.Model], keys[analytics.Persona]
			r.QuestionID, r.Question = keys[analytics.Question], texts[analytics.Question]
			r.AnswerID, r.Answer = keys[analytics.Answer], texts[analytics.Answer]
			fnErr = fn(&r)
		})
		if err != nil {
			return internal(err)
		}
		if lookErr != nil {
			return internal(lookErr)
		}
		if fnErr != nil {
			return fnErr
		}
	}
	if err := rows.Err(); err != nil {
		return internal(err)
	}
	return nil
}

// snapshotDict is one dictionary table read whole: keys and texts by
// code (codes are small positive numbers from one sequence per table).
type snapshotDict struct {
	keys, texts [][]byte
	sparse      map[uint64][2][]byte // codes too far above the others
}

// denseCodes bounds the codes held in slices; larger ones (left by many
// deleted entries) go to the map.
const denseCodes = 1 << 26

func (d *snapshotDict) read(ctx context.Context, q queryer, table string) error {
	//nolint:gosec // fixed table name
	rows, err := q.QueryContext(ctx, "SELECT code, item_id, item_text FROM "+table)
	if err != nil {
		return internal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			code      int64
			key, text []byte
		)
		if err := rows.Scan(&code, &key, &text); err != nil {
			return internal(err)
		}
		if key == nil {
			key = []byte{} // nil marks a missing code
		}
		if string(key) == string(text) {
			text = key
		}
		c := uint64(code) // #nosec G115 -- codes are positive
		if c >= denseCodes {
			if d.sparse == nil {
				d.sparse = map[uint64][2][]byte{}
			}
			d.sparse[c] = [2][]byte{key, text}
			continue
		}
		for uint64(len(d.keys)) <= c {
			d.keys = append(d.keys, nil)
			d.texts = append(d.texts, nil)
		}
		d.keys[c], d.texts[c] = key, text
	}
	if err := rows.Err(); err != nil {
		return internal(err)
	}
	return nil
}

// entry returns code c's key and text.
func (d *snapshotDict) entry(c uint64) (key, text []byte, ok bool) {
	if c < uint64(len(d.keys)) && d.keys[c] != nil {
		return d.keys[c], d.texts[c], true
	}
	e, ok := d.sparse[c]
	return e[0], e[1], ok
}
