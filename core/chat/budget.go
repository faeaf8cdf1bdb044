package chat

import (
	"fmt"
	"time"
)

// Budgets of the agent's tokens (cat.budget.*), as BudgetError and the
// refusal metric name them.
const (
	BudgetMonthly   = "monthly"
	BudgetUserDaily = "user_daily"
)

// BudgetError is the cause of an agent turn refused because a token
// budget is spent (an errs.KindRateLimited error): which budget, and how
// long until it starts again (the next calendar month or day, UTC).
type BudgetError struct {
	Budget     string
	Limit      int64
	Used       int64
	RetryAfter time.Duration
}

// RetryIn is how long until the budget starts again (the HTTP layer's
// Retry-After).
func (e *BudgetError) RetryIn() time.Duration { return e.RetryAfter }

func (e *BudgetError) Error() string {
	return fmt.Sprintf("the %s token budget is spent: %d of %d", e.Budget, e.Used, e.Limit)
}

// BudgetPeriods returns the starts of the UTC calendar month and day of
// now, and of the next ones: the periods cat.budget.monthly_tokens and
// cat.budget.user_daily_tokens count over.
func BudgetPeriods(now time.Time) (month, nextMonth, day, nextDay time.Time) {
	now = now.UTC()
	month = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	day = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	return month, month.AddDate(0, 1, 0), day, day.AddDate(0, 0, 1)
}
