package chatsql

import (
	"context"
	"slices"
)

// catOverrides returns the stored runtime configuration document of every
// CAT that has one.
func (s *Store) catOverrides(ctx context.Context) (map[string][]byte, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT cat, doc FROM chat_cat_overrides`)
	if err != nil {
		return nil, internal(err)
	}
	defer func() { _ = rows.Close() }()
	out := map[string][]byte{}
	for rows.Next() {
		var (
			cat string
			doc []byte
		)
		if err := rows.Scan(&cat, &doc); err != nil {
			return nil, internal(err)
		}
		out[cat] = slices.Clone(doc)
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err)
	}
	return out, nil
}

// saveCatOverride replaces the CAT's document.
func (s *Store) saveCatOverride(ctx context.Context, cat string, doc []byte) error {
	if doc == nil {
		doc = []byte{}
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO chat_cat_overrides (cat, doc) VALUES (?, ?)
		ON CONFLICT (cat) DO UPDATE SET doc = excluded.doc`, cat, doc); err != nil {
		return internal(err)
	}
	return nil
}
