package sqlstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"slices"
)

// An erased text must not stay in the dictionaries once no row uses it: a
// deletion collects the codes of the api rows it deletes and then deletes
// the entries no row of their CAT still refers to (read from dims_blocks).
// It runs in a write transaction that excludes every writer of rows
// (excludeWriters), so no write starts using a code meanwhile.

// gcMaxCodes is how many candidate codes a deletion collects before it
// collects the garbage, bounding its memory.
const gcMaxCodes = 100_000

// deadCodes collects per CAT the dictionary codes deleted rows used.
type deadCodes struct {
	cats map[string]*[dimsCodes]map[int64]struct{}
	n    int
}

func newDeadCodes() *deadCodes {
	return &deadCodes{cats: map[string]*[dimsCodes]map[int64]struct{}{}}
}

// add records the codes of one deleted api row.
func (d *deadCodes) add(cat string, dims []byte) error {
	c := d.cats[cat]
	if c == nil {
		c = &[dimsCodes]map[int64]struct{}{}
		for k := range c {
			c[k] = map[int64]struct{}{}
		}
		d.cats[cat] = c
	}
	for k := range dimsCodes {
		v, n := binary.Uvarint(dims)
		if n <= 0 || v == 0 {
			return errCorruptDims
		}
		dims = dims[n:]
		code := int64(v) // #nosec G115 -- codes are positive int64s
		if _, ok := c[k][code]; !ok {
			c[k][code] = struct{}{}
			d.n++
		}
	}
	return nil
}

// collect deletes the candidate entries no api row refers to. It changes
// d (the codes still used leave it): the caller starts afresh after a
// commit, and a retried attempt deletes a subset of what it would have.
func (s *Store) collect(ctx context.Context, tx *sql.Tx, d *deadCodes) error {
	// Counted for older releases sharing the database, whose code caches
	// trust their codes only while the count stays.
	if _, err := tx.ExecContext(ctx, "UPDATE dictionary_collections SET collections = collections + 1 WHERE id = 1"); err != nil {
		return internal(err)
	}
	cats := make([]string, 0, len(d.cats))
	for cat := range d.cats {
		cats = append(cats, cat)
	}
	slices.Sort(cats)
	for _, cat := range cats {
		dead := d.cats[cat]
		if err := s.dropReferenced(ctx, tx, cat, dead); err != nil {
			return err
		}
		for table, codes := range dead {
			if err := s.deleteEntries(ctx, tx, table, codes); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropReferenced removes from dead the codes some api row of the CAT
// still uses.
func (s *Store) dropReferenced(ctx context.Context, tx *sql.Tx, cat string, dead *[dimsCodes]map[int64]struct{}) error {
	//nolint:gosec // fixed SQL text; the value is bound
	rows, err := tx.QueryContext(ctx, "SELECT day, data FROM dims_blocks WHERE cat = "+s.dialect.placeholders(1, 1), cat)
	if err != nil {
		return internal(err)
	}
	defer rows.Close()
	var (
		day  int64
		data []byte
	)
	for rows.Next() {
		if err := rows.Scan(&day, &data); err != nil {
			return internal(err)
		}
		if _, err := eachBlockRow(day, data, func(_ int64, codes *[dimsCodes]uint64, _ *blockUsage) {
			for k, c := range codes {
				delete(dead[k], int64(c)) // #nosec G115 -- codes are positive int64s
			}
		}); err != nil {
			return internal(err)
		}
	}
	if err := rows.Err(); err != nil {
		return internal(err)
	}
	return nil
}

// deleteEntries deletes the codes from the dimension's dictionary.
func (s *Store) deleteEntries(ctx context.Context, tx *sql.Tx, table int, codes map[int64]struct{}) error {
	list := make([]any, 0, len(codes))
	for c := range codes {
		list = append(list, c)
	}
	for len(list) > 0 {
		chunk := list[:min(len(list), batchRows(s.dialect, 1))]
		list = list[len(chunk):]
		// #nosec G202 -- the table name comes from a fixed list, the values are bound.
		query := "DELETE FROM " + dictionaryTables[table] + " WHERE code IN (" + s.dialect.placeholders(1, len(chunk)) + ")"
		if _, err := tx.ExecContext(ctx, query, chunk...); err != nil {
			return internal(err)
		}
	}
	return nil
}

// merge adds o's codes to d.
func (d *deadCodes) merge(o *deadCodes) {
	for cat, codes := range o.cats {
		c := d.cats[cat]
		if c == nil {
			d.cats[cat] = codes
			for _, m := range codes {
				d.n += len(m)
			}
			continue
		}
		for k, m := range codes {
			for code := range m {
				if _, ok := c[k][code]; !ok {
					c[k][code] = struct{}{}
					d.n++
				}
			}
		}
	}
}
