package service_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/chat/service"
	"github.com/catsrv/catsrv/core/errs"
)

// fakeUsage answers TokensSince from fixed figures: the CAT's tokens, and
// each user's, since the bound it expects.
type fakeUsage struct {
	cat   int64
	users map[string]int64
	asked []string
}

func (u *fakeUsage) TokensSince(_ context.Context, cat, user string, since time.Time) (int64, error) {
	u.asked = append(u.asked, cat+"/"+user+"@"+since.Format(time.RFC3339))
	if user == "" {
		return u.cat, nil
	}
	return u.users[user], nil
}

// TestBudgets: an agent turn (by mode, by /agent_chat, or routed there by
// a custom rule) past the CAT's monthly or the user's daily token budget
// is refused as rate limited, with the time until the budget starts again
// (the next UTC month or day), counted, before anything is stored or any
// model asked; one short of it goes through; legacy turns never are
// refused; a budget of 0 is none.
func TestBudgets(t *testing.T) {
	cases := []struct {
		name       string
		mode       string
		handler    string
		message    string
		budget     catconfig.Budget
		cat        int64
		alice      int64
		wantBudget string // "" answered
	}{
		{"monthly spent", catconfig.ModeAgent, service.ByMode, "hello", catconfig.Budget{MonthlyTokens: 1000}, 1000, 0, chat.BudgetMonthly},
		{"monthly one short", catconfig.ModeAgent, service.ByMode, "hello", catconfig.Budget{MonthlyTokens: 1000}, 999, 0, ""},
		{"daily spent", catconfig.ModeAgent, service.ByMode, "hello", catconfig.Budget{MonthlyTokens: 1000, UserDailyTokens: 50}, 10, 60, chat.BudgetUserDaily},
		{"both spent: the month", catconfig.ModeAgent, service.ByMode, "hello", catconfig.Budget{MonthlyTokens: 1000, UserDailyTokens: 50}, 5000, 60, chat.BudgetMonthly},
		{"no budget", catconfig.ModeAgent, service.ByMode, "hello", catconfig.Budget{}, 1 << 40, 1 << 40, ""},
		{"agent_chat on a legacy CAT", catconfig.ModeLegacy, service.Agent, "hello", catconfig.Budget{UserDailyTokens: 50}, 0, 50, chat.BudgetUserDaily},
		{"legacy never refused", catconfig.ModeLegacy, service.ByMode, "hello", catconfig.Budget{MonthlyTokens: 1, UserDailyTokens: 1}, 5, 5, ""},
		{"legacy_chat on an agent CAT", catconfig.ModeAgent, service.Legacy, "hello", catconfig.Budget{MonthlyTokens: 1}, 5, 5, ""},
		{"custom routed to the agent", catconfig.ModeCustom, service.ByMode, "a refund please", catconfig.Budget{MonthlyTokens: 1}, 5, 5, chat.BudgetMonthly},
		{"custom routed to legacy", catconfig.ModeCustom, service.ByMode, "hello", catconfig.Budget{MonthlyTokens: 1}, 5, 5, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			usage := &fakeUsage{cat: c.cat, users: map[string]int64{"alice": c.alice}}
			var refused []string
			f := newFixture(t, func(cfg *catconfig.Cat) {
				cfg.Chat.ChatMode, cfg.Chat.Budget = c.mode, c.budget
				cfg.Chat.Custom.Rules = []string{"keyword refund => agent"}
			}, func(d *service.Deps) {
				d.Usage = usage
				d.BudgetRefused = func(cat, budget string) { refused = append(refused, cat+"/"+budget) }
			})
			_, err := f.svc.Chat(t.Context(), request(c.message), c.handler)
			if c.wantBudget == "" {
				if err != nil || len(f.turns) != 1 || len(refused) != 0 {
					t.Fatalf("answered: %v, %d turns stored, refusals %v", err, len(f.turns), refused)
				}
				return
			}
			var be *chat.BudgetError
			if errs.KindOf(err) != errs.KindRateLimited || !errors.As(err, &be) || be.Budget != c.wantBudget {
				t.Fatalf("error %v, want the %s budget spent", err, c.wantBudget)
			}
			// now is 2026-06-01 12:00 UTC.
			want := map[string]time.Duration{chat.BudgetMonthly: 29*24*time.Hour + 12*time.Hour, chat.BudgetUserDaily: 12 * time.Hour}[c.wantBudget]
			if be.RetryAfter != want {
				t.Errorf("retry after %v, want %v", be.RetryAfter, want)
			}
			if len(f.turns) != 0 || len(f.model.CompleteCalls())+len(f.model.StreamCalls()) != 0 {
				t.Errorf("a refused turn stored %d turns, asked the model", len(f.turns))
			}
			if len(refused) != 1 || refused[0] != "demo/"+c.wantBudget {
				t.Errorf("refusals counted %v", refused)
			}
		})
	}
	// The bounds asked: the month's and the day's starts, UTC.
	usage := &fakeUsage{users: map[string]int64{}}
	f := newFixture(t, func(cfg *catconfig.Cat) {
		cfg.Chat.ChatMode, cfg.Chat.Budget = catconfig.ModeAgent, catconfig.Budget{MonthlyTokens: 10, UserDailyTokens: 10}
	}, func(d *service.Deps) { d.Usage = usage })
	if _, err := f.svc.Chat(t.Context(), request("hello"), service.ByMode); err != nil {
		t.Fatal(err)
	}
	if want := []string{"demo/@2026-06-01T00:00:00Z", "demo/alice@2026-06-01T00:00:00Z"}; len(usage.asked) != 2 || usage.asked[0] != want[0] || usage.asked[1] != want[1] {
		t.Errorf("asked %v, want %v", usage.asked, want)
	}
}

func TestBudgetPeriods(t *testing.T) {
	at := time.Date(2026, 12, 31, 23, 30, 0, 0, time.FixedZone("x", -5*3600)) // 2027-01-01 04:30 UTC
	month, nextMonth, day, nextDay := chat.BudgetPeriods(at)
	for name, c := range map[string][2]time.Time{
		"month": {month, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}, "next month": {nextMonth, time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)},
		"day": {day, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}, "next day": {nextDay, time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC)},
	} {
		if !c[0].Equal(c[1]) {
			t.Errorf("%s = %v, want %v", name, c[0], c[1])
		}
	}
}
