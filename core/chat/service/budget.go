package service

import (
	"context"
	"time"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

// checkBudget refuses an agent turn once the CAT's monthly token budget,
// or the user's daily one, is spent (used >= the budget; 0: none): an
// errs.KindRateLimited error whose cause is a *chat.BudgetError saying
// how long until the budget starts again. The refusal is counted
// (Deps.BudgetRefused). Without Deps.Usage, no budget is enforced.
func (s *Service) checkBudget(ctx context.Context, cfg catconfig.Cat, userID string) error {
	b := cfg.Chat.Budget
	if s.d.Usage == nil || (b.MonthlyTokens <= 0 && b.UserDailyTokens <= 0) {
		return nil
	}
	now := s.d.Clock.Now()
	month, nextMonth, day, nextDay := chat.BudgetPeriods(now)
	checks := []struct {
		name  string
		limit int
		user  string
		since time.Time
		until time.Time
	}{
		{chat.BudgetMonthly, b.MonthlyTokens, "", month, nextMonth},
		{chat.BudgetUserDaily, b.UserDailyTokens, userID, day, nextDay},
	}
	for _, c := range checks {
		if c.limit <= 0 {
			continue
		}
		used, err := s.d.Usage.TokensSince(ctx, cfg.Name, c.user, c.since)
		if err != nil {
			return err
		}
		if used < int64(c.limit) {
			continue
		}
		if s.d.BudgetRefused != nil {
			s.d.BudgetRefused(cfg.Name, c.name)
		}
		cause := &chat.BudgetError{Budget: c.name, Limit: int64(c.limit), Used: used, RetryAfter: c.until.Sub(now)}
		what := "this assistant's monthly token budget is spent; it starts again at " + c.until.Format(time.RFC3339)
		if c.name == chat.BudgetUserDaily {
			what = "your daily token budget with this assistant is spent; it starts again at " + c.until.Format(time.RFC3339)
		}
		return errs.Wrap(errs.KindRateLimited, cause, what)
	}
	return nil
}
