package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/catsrv/catsrv/core/analytics"
)

// ReadSnapshot is the fast first read of the feed (colindex.Snapshot):
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
func (s *Store) ReadSnapshot(ctx context.Context, fn func(*analytics.FeedRow) error) (int64, map[int64]string, error) {
	var horizon int64
	if s.dialect == postgresDialect {
		if err := s.db.DB.QueryRowContext(ctx, feedHorizon).Scan(&horizon); err != nil {
			return 0, nil, internal(err)
		}
	}
	// A connection of its own, which on SQLite is closed after the read
	// rather than pooled: its page cache (outside the Go heap) is full of
	// the blocks and dictionaries read once here, and a pooled
	// connection would keep them for its life (releaseSnapshotConn).
	conn, err := s.db.DB.Conn(ctx)
	if err != nil {
		return 0, nil, internal(err)
	}
	defer s.releaseSnapshotConn(conn)
	tx, err := s.beginRead(ctx, conn)
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

type snapshotRow struct {
	micros int64
	codes  [dimsCodes]uint64
}

// readSnapshotBlocks decodes every block of the transaction's state into
// rows for fn, a CAT's UTC day at a time, each day's rows sorted by time
// (stably: rows of equal time in the blocks' order), so that the index
// receives each CAT's rows in time order (the blocks come in the primary
// key's order), which it adds fastest.
func readSnapshotBlocks(ctx context.Context, q queryer, dicts *[dimsCodes]snapshotDict, fn func(*analytics.FeedRow) error) error {
	rows, err := q.QueryContext(ctx, "SELECT cat, day, data FROM dims_blocks ORDER BY cat, day, block")
	if err != nil {
		return internal(err)
	}
	defer rows.Close()
	var (
		r          analytics.FeedRow
		keys       [dimsCodes][]byte
		texts      [dimsCodes][]byte
		dayRows    []snapshotRow
		cat, data  sql.RawBytes // valid until the next row: decoded at once
		curCat     []byte
		day, dayOf int64
	)
	flush := func() error {
		slices.SortStableFunc(dayRows, func(a, b snapshotRow) int { return cmp.Compare(a.micros, b.micros) })
		r.Cat = curCat
		for k := range dayRows {
			row := &dayRows[k]
			for d, c := range row.codes {
				key, text, ok := dicts[d].entry(c)
				if !ok {
					return internal(fmt.Errorf("code %d of %s not in its dictionary", c, dictionaryTables[d]))
				}
				keys[d], texts[d] = key, text
			}
			r.Micros = row.micros
			r.Topic, r.Model, r.Persona = keys[analytics.Topic], keys[analytics.Model], keys[analytics.Persona]
			r.QuestionID, r.Question = keys[analytics.Question], texts[analytics.Question]
			r.AnswerID, r.Answer = keys[analytics.Answer], texts[analytics.Answer]
			if err := fn(&r); err != nil {
				return err
			}
		}
		dayRows = dayRows[:0]
		return nil
	}
	for rows.Next() {
		if err := rows.Scan(&cat, &day, &data); err != nil {
			return internal(err)
		}
		if len(dayRows) > 0 && (day != dayOf || string(cat) != string(curCat)) {
			if err := flush(); err != nil {
				return err
			}
		}
		if string(cat) != string(curCat) {
			curCat = append([]byte{}, cat...) // the rows' CAT must stay valid while fn runs
		}
		dayOf = day
		if _, err := eachBlockRow(day, data, func(micros int64, codes *[dimsCodes]uint64) {
			dayRows = append(dayRows, snapshotRow{micros: micros, codes: *codes})
		}); err != nil {
			return internal(err)
		}
	}
	if err := rows.Err(); err != nil {
		return internal(err)
	}
	return flush()
}

// snapshotDict is one dictionary table read whole, compactly: every
// key and text back to back in chunks that never move (no allocation per
// entry, no copy as it grows), and where each lies by code (codes are
// small positive numbers from one sequence per table).
type snapshotDict struct {
	chunks [][]byte
	spans  []dictSpan
	sparse map[uint64][2][]byte // codes too far above the others
}

// dictSpan is where a code's key (chunks[chunk][start:keyEnd]) and text
// (chunks[chunk][textStart:end]) lie; a missing code has no chunk (0:
// the first chunk is never used).
type dictSpan struct {
	chunk                         uint32
	start, keyEnd, textStart, end uint32
}

// denseCodes bounds the codes held in slices; larger ones (left by many
// deleted entries) go to the map.
const denseCodes = 1 << 26

// dictChunkBytes is the size of a chunk; a longer entry gets a chunk of
// its own.
const dictChunkBytes = 1 << 20

func (d *snapshotDict) read(ctx context.Context, q queryer, table string) error {
	var top int64
	//nolint:gosec // fixed table name
	if err := q.QueryRowContext(ctx, "SELECT COALESCE(MAX(code), 0) FROM "+table).Scan(&top); err != nil {
		return internal(err)
	}
	d.spans = make([]dictSpan, 0, min(top+1, denseCodes))
	d.chunks = [][]byte{nil}
	//nolint:gosec // fixed table name
	rows, err := q.QueryContext(ctx, "SELECT code, item_id, item_text FROM "+table)
	if err != nil {
		return internal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			code      int64
			key, text sql.RawBytes
		)
		if err := rows.Scan(&code, &key, &text); err != nil {
			return internal(err)
		}
		same := string(key) == string(text)
		c := uint64(code) // #nosec G115 -- codes are positive
		if c >= denseCodes {
			if d.sparse == nil {
				d.sparse = map[uint64][2][]byte{}
			}
			k := append([]byte{}, key...)
			t := k
			if !same {
				t = append([]byte{}, text...)
			}
			d.sparse[c] = [2][]byte{k, t}
			continue
		}
		size := len(key)
		if !same {
			size += len(text)
		}
		last := len(d.chunks) - 1
		if len(d.chunks[last])+size > cap(d.chunks[last]) {
			d.chunks = append(d.chunks, make([]byte, 0, max(size, dictChunkBytes)))
			last++
		}
		chunk := d.chunks[last]
		sp := dictSpan{chunk: uint32(last), start: uint32(len(chunk))} // #nosec G115 -- few chunks, each below 4 GiB
		chunk = append(chunk, key...)
		sp.keyEnd = uint32(len(chunk)) // #nosec G115 -- below 4 GiB
		if same {
			sp.textStart, sp.end = sp.start, sp.keyEnd
		} else {
			sp.textStart = sp.keyEnd
			chunk = append(chunk, text...)
			sp.end = uint32(len(chunk)) // #nosec G115 -- below 4 GiB
		}
		d.chunks[last] = chunk
		if uint64(len(d.spans)) <= c {
			d.spans = append(d.spans, make([]dictSpan, int(c)+1-len(d.spans))...)
		}
		d.spans[c] = sp
	}
	if err := rows.Err(); err != nil {
		return internal(err)
	}
	return nil
}

// entry returns code c's key and text.
func (d *snapshotDict) entry(c uint64) (key, text []byte, ok bool) {
	if c < uint64(len(d.spans)) {
		if sp := d.spans[c]; sp.chunk != 0 {
			chunk := d.chunks[sp.chunk]
			return chunk[sp.start:sp.keyEnd:sp.keyEnd], chunk[sp.textStart:sp.end:sp.end], true
		}
	}
	e, ok := d.sparse[c]
	return e[0], e[1], ok
}

// releaseSnapshotConn ends ReadSnapshot's use of its connection. On a
// SQLite file the connection is closed, which gives back its page cache
// (full of blocks never read again); PostgreSQL's goes back to the pool.
func (s *Store) releaseSnapshotConn(conn *sql.Conn) {
	if s.reserveWriter {
		dropConn(conn)
		return
	}
	_ = conn.Close()
}
