package sqlstore

import (
	"path/filepath"
	"testing"
)

// TestWriterCache: the SQLite connection Appends write on has an 8 MiB
// page cache, 32 MiB in a store opened with BulkWrites, and the pooled
// readers 2 MiB.
func TestWriterCache(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		want int
	}{
		{"serve", nil, -8192},
		{"bulk writes", []Option{BulkWrites()}, -32768},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "c.db"), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			conn, err := s.writerConn(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var got int
			if err := conn.QueryRowContext(t.Context(), "PRAGMA cache_size").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("writer cache_size = %d, want %d", got, tc.want)
			}
			var reader int
			if err := s.db.QueryRowContext(t.Context(), "PRAGMA cache_size").Scan(&reader); err != nil {
				t.Fatal(err)
			}
			if reader != -2048 {
				t.Errorf("reader cache_size = %d, want -2048", reader)
			}
		})
	}
}
