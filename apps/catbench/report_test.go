package main

import (
	"strings"
	"testing"
	"time"
)

func TestRouteTable(t *testing.T) {
	c := func(route, mix string, limit int, p50, p99 time.Duration) cell {
		return cell{route: route, mix: mix, limit: limit, stats: stats{p50: p50, p99: p99}}
	}
	r := report{cells: []cell{
		c("/all_warehouse", "full range", 100, 2*time.Millisecond, 9*time.Millisecond),
		c("/all_warehouse", "full range", 0, 70*time.Millisecond, 90*time.Millisecond),
		c("/all_warehouse", "30 days", 100, 3*time.Millisecond, 4*time.Millisecond),
		c("/all_warehouse", "30 days", 0, 20*time.Millisecond, 40*time.Millisecond),
		c("/all_legacy", "one questionid", 100, 40*time.Millisecond, 50*time.Millisecond),
		c("/metrics/total_interactions", "full range", 0, 200*time.Microsecond, 500*time.Microsecond),
		c("/metrics/total_interactions", "end only", 0, 100*time.Microsecond, 600*time.Microsecond),
		c("/metrics/topic_counts", "30 days", 0, 150*time.Microsecond, 300*time.Microsecond),
	}}
	want := []string{
		"| route | mixes | p50, worst mix | p99, worst mix | whole lists: p50, worst mix |",
		"|---|---|---|---|---|",
		"| /all_warehouse | 2 | 3.00 ms (30 days) | 9.00 ms | 70.00 ms (full range) |",
		"| /all_legacy | 1 | 40.00 ms (one questionid) | 50.00 ms | — |",
		"| /metrics/* | 3 | 0.20 ms (total_interactions, full range) | 0.60 ms | — |",
		"",
	}
	if got := strings.Split(strings.TrimSuffix(r.routeTable(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("routeTable:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if (&report{}).routeTable() != "" {
		t.Error("routeTable of no cells is not empty")
	}
	if n := strings.Count(r.cellTable(), "\n"); n != 2+len(r.cells)+1 {
		t.Errorf("cellTable has %d lines, want a header, a row per cell and a blank line", n)
	}
}
