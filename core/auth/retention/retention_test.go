package retention_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/auth/retention"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports/mocks"
)

func TestNewRefusesNoRetention(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Hour} {
		if _, err := retention.New(&mocks.AuditLogMock{}, &mocks.ClockMock{}, d, 0); errs.KindOf(err) != errs.KindInvalid {
			t.Fatalf("New(retention %s) = %v, want an invalid-input error", d, err)
		}
	}
}

// A failed pass is reported and the schedule goes on; the cut follows the
// clock and the batch defaults.
func TestRunReportsFailuresAndGoesOn(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	fail := true
	var cuts []time.Time
	var batches []int
	audit := &mocks.AuditLogMock{PruneFunc: func(_ context.Context, before time.Time, batch int) (int, error) {
		cuts, batches = append(cuts, before), append(batches, batch)
		if fail {
			fail = false
			return 0, errors.New("database down")
		}
		return 7, nil
	}}
	clk := &mocks.ClockMock{NowFunc: func() time.Time { return now }}
	p, err := retention.New(audit, clk, 48*time.Hour, 0)
	if err != nil {
		t.Fatal(err)
	}
	ticks := make(chan time.Time, 1)
	ticks <- now
	close(ticks)
	var reports []string
	p.Run(t.Context(), ticks, func(n int, err error) {
		if err != nil {
			reports = append(reports, "error")
			return
		}
		reports = append(reports, "ok")
		if n != 7 {
			t.Errorf("reported %d deleted, want 7", n)
		}
	})
	if len(reports) != 2 || reports[0] != "error" || reports[1] != "ok" {
		t.Fatalf("reports %v, want [error ok]", reports)
	}
	for i := range cuts {
		if !cuts[i].Equal(now.Add(-48*time.Hour)) || batches[i] != retention.DefaultBatch {
			t.Fatalf("pass %d pruned before %s in batches of %d", i, cuts[i], batches[i])
		}
	}
}
