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
//
// The rows carry their usage but no rating (Rating 0: the blocks hold
// none, as ratings change): ReadRated, by the position returned, gives
// the rated ones.
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

// snapshotDay is the rows of one CAT's UTC day, decoded from its blocks
// and sorted by time.
type snapshotDay struct {
	cat  []byte
	rows []snapshotRow
}

type snapshotRow struct {
	micros int64
	codes  [dimsCodes]uint64
	usage  blockUsage
}

// readSnapshotBlocks decodes every block of the transaction's state into
// rows for fn. A goroutine reads and decodes the blocks, a CAT's UTC day
// at a time, and sorts each day's rows by time (stably: rows of equal
// time in the blocks' order), while this one looks their texts up and
// hands them to fn: the index then receives each CAT's rows in time
// order (the blocks come in the primary key's order, day by day), which
// it adds fastest, and the two cores share the work. Each row carries
// its CAT's row count in the snapshot (FeedRow.CatRows), read first.
func readSnapshotBlocks(ctx context.Context, q queryer, dicts *[dimsCodes]snapshotDict, fn func(*analytics.FeedRow) error) error {
	catRows, err := readCatRows(ctx, q)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Two days in flight at most: one being decoded, one being added.
	days, free := make(chan *snapshotDay, 1), make(chan *snapshotDay, 2)
	free <- &snapshotDay{}
	free <- &snapshotDay{}
	errc := make(chan error, 1)
	go func() {
		defer close(days)
		errc <- decodeSnapshotDays(ctx, q, free, days)
	}()
	var (
		r         analytics.FeedRow
		addErr    error
		keys      [dimsCodes][]byte
		texts     [dimsCodes][]byte
		catString string
	)
	for day := range days {
		if addErr == nil {
			if string(day.cat) != catString {
				catString = string(day.cat)
			}
			r.Cat, r.CatRows = day.cat, catRows[catString]
			for k := range day.rows {
				row := &day.rows[k]
				for d, c := range row.codes {
					key, text, ok := dicts[d].entry(c)
					if !ok {
						addErr = internal(fmt.Errorf("code %d of %s not in its dictionary", c, dictionaryTables[d]))
						break
					}
					keys[d], texts[d] = key, text
				}
				if addErr != nil {
					break
				}
				r.Micros, r.Codes = row.micros, row.codes
				r.InputTokens, r.OutputTokens, r.CostNanos = row.usage.in, row.usage.out, row.usage.cost
				r.LatencyBucket = row.usage.latency
				r.Topic, r.Model, r.Persona = keys[analytics.Topic], keys[analytics.Model], keys[analytics.Persona]
				r.QuestionID, r.Question = keys[analytics.Question], texts[analytics.Question]
				r.AnswerID, r.Answer = keys[analytics.Answer], texts[analytics.Answer]
				if addErr = fn(&r); addErr != nil {
					break
				}
			}
			if addErr != nil {
				cancel() // the reader stops; its days are drained below
			}
		}
		free <- day
	}
	readErr := <-errc
	if addErr != nil {
		return addErr
	}
	return readErr
}

// readCatRows returns each CAT's api row count in the blocks.
func readCatRows(ctx context.Context, q queryer) (map[string]int, error) {
	rows, err := q.QueryContext(ctx, "SELECT cat, SUM(row_count) FROM dims_blocks GROUP BY cat")
	if err != nil {
		return nil, internal(err)
	}
	defer rows.Close()
	counts := map[string]int{}
	for rows.Next() {
		var (
			cat string
			n   int64
		)
		if err := rows.Scan(&cat, &n); err != nil {
			return nil, internal(err)
		}
		counts[cat] = int(n)
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err)
	}
	return counts, nil
}

// decodeSnapshotDays reads the blocks in the primary key's order and
// sends each (CAT, day)'s rows, sorted by time, to days, taking the
// buffers from free.
func decodeSnapshotDays(ctx context.Context, q queryer, free <-chan *snapshotDay, days chan<- *snapshotDay) error {
	rows, err := q.QueryContext(ctx, "SELECT cat, day, data FROM dims_blocks ORDER BY cat, day, block")
	if err != nil {
		return internal(err)
	}
	defer rows.Close()
	var (
		cur       *snapshotDay
		curDay    int64
		cat, data sql.RawBytes // valid until the next row: decoded at once
		day       int64
		started   bool
	)
	send := func() error {
		slices.SortStableFunc(cur.rows, func(a, b snapshotRow) int { return cmp.Compare(a.micros, b.micros) })
		select {
		case days <- cur:
			cur = nil
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for rows.Next() {
		if err := rows.Scan(&cat, &day, &data); err != nil {
			return internal(err)
		}
		if started && (day != curDay || string(cat) != string(cur.cat)) {
			if err := send(); err != nil {
				return err
			}
		}
		if cur == nil {
			select {
			case cur = <-free:
			case <-ctx.Done():
				return ctx.Err()
			}
			cur.cat = append(cur.cat[:0], cat...)
			cur.rows = cur.rows[:0]
		}
		started, curDay = true, day
		if _, err := eachBlockRow(day, data, func(micros int64, codes *[dimsCodes]uint64, u *blockUsage) {
			cur.rows = append(cur.rows, snapshotRow{micros: micros, codes: *codes, usage: *u})
		}); err != nil {
			return internal(err)
		}
	}
	if err := rows.Err(); err != nil {
		return internal(err)
	}
	if cur != nil && len(cur.rows) > 0 {
		return send()
	}
	return nil
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
// SQLite file the connection is closed, which gives its page cache back:
// at 10M interactions the start-up read left 8 MiB of blocks and
// dictionaries in a pooled connection's cache, resident for as long as
// the connection lived though never read again. PostgreSQL's connection
// keeps nothing of the kind in this process and goes back to the pool.
func (s *Store) releaseSnapshotConn(conn *sql.Conn) {
	if s.reserveWriter {
		dropConn(conn)
		return
	}
	_ = conn.Close()
}
