package telemetry_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/catsrv/catsrv/apps/catsrv/internal/telemetry"
)

// TestBudgetRefusalsCount: every configured CAT's series exist at 0; a
// refusal counts under its CAT and budget.
func TestBudgetRefusalsCount(t *testing.T) {
	reg := prometheus.NewRegistry()
	refused, err := telemetry.BudgetRefusals(reg, []string{"demo", "shop"})
	if err != nil {
		t.Fatal(err)
	}
	refused("demo", "user_daily")
	refused("demo", "user_daily")
	refused("shop", "monthly")
	want := `
# HELP catsrv_budget_refusals_total Agent turns refused (429) because the CAT's monthly or the user's daily token budget was spent, by CAT and budget.
# TYPE catsrv_budget_refusals_total counter
catsrv_budget_refusals_total{budget="monthly",cat="demo"} 0
catsrv_budget_refusals_total{budget="monthly",cat="shop"} 1
catsrv_budget_refusals_total{budget="user_daily",cat="demo"} 2
catsrv_budget_refusals_total{budget="user_daily",cat="shop"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "catsrv_budget_refusals_total"); err != nil {
		t.Error(err)
	}
}
