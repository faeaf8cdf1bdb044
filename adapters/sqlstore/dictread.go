package sqlstore

import (
	"context"
	"encoding/json"

	"github.com/catsrv/catsrv/core/analytics"
)

// The raw pass reads the dictionaries twice per request: once to turn
// filter values into codes, once to turn counted codes into keys and
// texts. Either list is bound as one parameter (a JSON array that SQLite
// unpacks with json_each, an array on PostgreSQL), so its length never
// meets a bind-parameter limit.

// codesOf returns the codes of the CAT's entries whose key is one of the
// values.
func (s *Store) codesOf(ctx context.Context, q queryer, d analytics.Dimension, cat string, values []string) (map[uint64]struct{}, error) {
	table := dictionaryTables[d]
	var (
		query string
		list  any
	)
	if s.dialect == postgresDialect {
		query = "SELECT code FROM " + table + " WHERE cat = $1 AND item_id = ANY($2)"
		list = values
	} else {
		query = "SELECT code FROM " + table + " WHERE cat = ? AND item_id IN (SELECT value FROM json_each(?))"
		b, err := json.Marshal(values)
		if err != nil {
			return nil, internal(err)
		}
		list = string(b)
	}
	rows, err := q.QueryContext(ctx, query, cat, list)
	if err != nil {
		return nil, internal(err)
	}
	defer rows.Close()
	codes := map[uint64]struct{}{}
	for rows.Next() {
		var code int64
		if err := rows.Scan(&code); err != nil {
			return nil, internal(err)
		}
		codes[uint64(code)] = struct{}{} // #nosec G115 -- codes are positive
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err)
	}
	return codes, nil
}

// describedEntry is a dictionary entry's key and text.
type describedEntry struct {
	key, text string
}

// describe returns the key and text of each code.
func (s *Store) describe(ctx context.Context, q queryer, d analytics.Dimension, codes []uint64) (map[uint64]describedEntry, error) {
	out := make(map[uint64]describedEntry, len(codes))
	if len(codes) == 0 {
		return out, nil
	}
	table := dictionaryTables[d]
	var (
		query string
		list  any
	)
	if s.dialect == postgresDialect {
		query = "SELECT code, item_id, item_text FROM " + table + " WHERE code = ANY($1)"
		signed := make([]int64, len(codes))
		for k, c := range codes {
			signed[k] = int64(c) // #nosec G115 -- decoded from positive int64 codes
		}
		list = signed
	} else {
		query = "SELECT code, item_id, item_text FROM " + table + " WHERE code IN (SELECT value FROM json_each(?))"
		b, err := json.Marshal(codes)
		if err != nil {
			return nil, internal(err)
		}
		list = string(b)
	}
	rows, err := q.QueryContext(ctx, query, list)
	if err != nil {
		return nil, internal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			code      int64
			key, text string
		)
		if err := rows.Scan(&code, &key, &text); err != nil {
			return nil, internal(err)
		}
		if key == text {
			text = key // one string for both, as most topics, models and personas are
		}
		out[uint64(code)] = describedEntry{key: key, text: text} // #nosec G115 -- codes are positive
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err)
	}
	return out, nil
}
