package telemetry

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/core/analytics"
)

// logOf returns n interactions of the CAT, api or not as api says.
func logOf(n int, api bool) []analytics.Interaction {
	kind := analytics.EventKindAPI
	if !api {
		kind = "feedback"
	}
	out := make([]analytics.Interaction, n)
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for k := range out {
		out[k] = analytics.Interaction{Time: day.Add(time.Duration(k) * time.Minute), Cat: "demo", EventKind: kind,
			Topic: "t", Model: "m", Persona: "p", Question: fmt.Sprintf("q%d", k), Answer: "a"}
	}
	return out
}

// TestIndexLag: over a real database, the collector reports the rows the
// index holds, the api rows stored that it has not applied, and how old
// its view is while it is behind; a database it cannot read leaves the
// lag out of the scrape.
func TestIndexLag(t *testing.T) {
	for _, b := range sqltest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			store := sqltest.Open(t, b.DSN(t))
			appendRows := func(in []analytics.Interaction) {
				t.Helper()
				if _, err := store.Append(t.Context(), analytics.Each(in)); err != nil {
					t.Fatal(err)
				}
			}
			appendRows(append(logOf(10, true), logOf(4, false)...))
			idx, err := colindex.Build(t.Context(), store)
			if err != nil {
				t.Fatal(err)
			}
			c := IndexLag(idx, store.CountSince).(*indexLag)
			c.now = func() time.Time { return idx.CurrentAt().Add(3 * time.Second) }
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(c)
			expect := func(rows, lagRows int, lagSecs float64) {
				t.Helper()
				want := fmt.Sprintf(`# HELP catsrv_index_lag_rows Api interactions stored in the database that the column index has not applied yet.
# TYPE catsrv_index_lag_rows gauge
catsrv_index_lag_rows %d
# HELP catsrv_index_lag_seconds 0 when the column index holds every stored row, else the time since its last successful refresh began.
# TYPE catsrv_index_lag_seconds gauge
catsrv_index_lag_seconds %g
# HELP catsrv_index_rows Api interactions the column index holds.
# TYPE catsrv_index_rows gauge
catsrv_index_rows %d
`, lagRows, lagSecs, rows)
				if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
					t.Fatal(err)
				}
			}
			expect(10, 0, 0)
			appendRows(append(logOf(5, true), logOf(3, false)...)) // another writer: not through the index
			expect(10, 5, 3)
			if err := idx.Refresh(t.Context()); err != nil {
				t.Fatal(err)
			}
			expect(15, 0, 0)

			if err := store.Close(); err != nil {
				t.Fatal(err)
			}
			families, err := reg.Gather()
			if err == nil {
				t.Fatal("a scrape over a closed database reported no error")
			}
			var names []string
			for _, f := range families {
				names = append(names, f.GetName())
			}
			if strings.Join(names, ",") != "catsrv_index_rows" {
				t.Fatalf("a scrape over a closed database gathered %v, want only catsrv_index_rows", names)
			}
		})
	}
}
