package sqltest

import (
	"testing"
)

// TestPoolHandsOutFreshState: a schema that a test filled (rows, a
// counter row the migrations wrote, sequences) comes out of the pool as
// the migrations left it.
func TestPoolHandsOutFreshState(t *testing.T) {
	for i := range 3 {
		t.Run("", func(t *testing.T) {
			s := Open(t, PostgresDSN(t))
			db := s.DB()
			var rows, collections, block int64
			if err := db.QueryRowContext(t.Context(), `SELECT (SELECT count(*) FROM interactions) + (SELECT count(*) FROM interaction_deletions),
				(SELECT collections FROM dictionary_collections WHERE id = 1), nextval('dims_blocks_seq')`).Scan(&rows, &collections, &block); err != nil {
				t.Fatal(err)
			}
			if rows != 0 || collections != 0 || block != 1099511627776 {
				t.Fatalf("run %d: rows %d, collections %d, first block %d; want 0, 0, 1099511627776", i, rows, collections, block)
			}
			for _, q := range []string{
				`UPDATE dictionary_collections SET collections = collections + 3`,
				`INSERT INTO interaction_deletions (cat, api_rows) VALUES ('demo', 1)`,
				`SELECT nextval('interaction_deletions_generation_seq')`,
			} {
				if _, err := db.ExecContext(t.Context(), q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		})
	}
}

// TestPoolDropsChangedSchemas: a schema whose catalog a test changed does
// not go back to the pool.
func TestPoolDropsChangedSchemas(t *testing.T) {
	t.Run("change", func(t *testing.T) {
		s := Open(t, PostgresDSN(t))
		if _, err := s.DB().ExecContext(t.Context(), `CREATE INDEX pool_test_changed ON interactions (cat)`); err != nil {
			t.Fatal(err)
		}
	})
	s := Open(t, PostgresDSN(t))
	var n int
	if err := s.DB().DB.QueryRowContext(t.Context(), `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE starts_with(n.nspname, $1) AND c.relname = 'pool_test_changed'`, poolPrefix).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d pooled schemas have the index a test added", n)
	}
}
