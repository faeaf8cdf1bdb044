package sqlstore

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRatedReadIsCovered asks SQLite for the plan of ReadRated's query
// and expects it answered from the index interactions_rated alone: a
// column added to ratedColumns but not to the index (coveringRated)
// would send every rated row to a random read of its table page again.
func TestRatedReadIsCovered(t *testing.T) {
	t.Parallel() // a store of its own
	s, err := Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "plan.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	query, args := s.feedQuery(feedRead{cat: "alpha", after: 0, upTo: 100, rated: true})
	rows, err := s.db.DB.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(plan) != 1 || !strings.Contains(plan[0], "USING COVERING INDEX interactions_rated") {
		t.Errorf("ReadRated's plan %q, want one search of COVERING INDEX interactions_rated", plan)
	}
}
