package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/catsrv/catsrv/core/chat"
)

// BudgetRefusals registers catsrv_budget_refusals_total in reg, the agent
// turns refused because a token budget was spent, by CAT and budget
// (monthly or user_daily), every configured CAT's series at 0 from the
// start; it returns what counts one refusal (service.Deps.BudgetRefused).
func BudgetRefusals(reg prometheus.Registerer, cats []string) (func(cat, budget string), error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "catsrv_budget_refusals_total",
		Help: "Agent turns refused (429) because the CAT's monthly or the user's daily token budget was spent, by CAT and budget.",
	}, []string{"cat", "budget"})
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	for _, cat := range cats {
		for _, b := range []string{chat.BudgetMonthly, chat.BudgetUserDaily} {
			c.WithLabelValues(cat, b)
		}
	}
	return func(cat, budget string) { c.WithLabelValues(cat, budget).Inc() }, nil
}
