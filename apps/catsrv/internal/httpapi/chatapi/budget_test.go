package chatapi_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/adapters/openai/openaitest"
	"github.com/catsrv/catsrv/core/catconfig"
)

// TestBudgetsAnswer429: on an agent CAT with budgets of 40 tokens a month
// and 20 a user a day, each turn using 25: alice's first turn answers,
// her second is 429 (her day spent) with Retry-After until the next UTC
// day; bob's first answers, his second is 429 (the month spent) with
// Retry-After until the next UTC month, streamed too; a legacy turn of
// the same CAT still answers; /metrics counts each refusal by budget.
func TestBudgetsAnswer429(t *testing.T) {
	e := NewChatEnv(t, func(c *catconfig.Cat) {
		if c.Name == ToolsCat {
			c.Chat.Budget = catconfig.Budget{MonthlyTokens: 40, UserDailyTokens: 20}
		}
	})
	e.Scripted.Script = openaitest.Steps(openaitest.Reply{Text: "Fine.", Usage: 25})
	alice, bob := e.Token(t, "alice", "user"), e.Token(t, "bob", "user")
	// The clock ticks a millisecond a reading from Now, a whole second:
	// the seconds left round up to the whole ones from Now.
	nextDay := Now.Truncate(24 * time.Hour).Add(24 * time.Hour)
	nextMonth := time.Date(Now.Year(), Now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	steps := []struct {
		who, body  string
		auth       string
		extra      []func(map[string]any)
		status     int
		retryAfter time.Time
	}{
		{"alice", "first", alice, nil, http.StatusOK, time.Time{}},
		{"alice", "second", alice, nil, http.StatusTooManyRequests, nextDay},
		{"bob", "first", bob, nil, http.StatusOK, time.Time{}},
		{"bob", "second", bob, nil, http.StatusTooManyRequests, nextMonth},
		{"bob", "streamed", bob, []func(map[string]any){streamed}, http.StatusTooManyRequests, nextMonth},
	}
	for _, s := range steps {
		r := e.Call(t, http.MethodPost, toolsChat, s.auth, chatMsg(s.body, s.extra...))
		if r.Status != s.status {
			t.Fatalf("%s's %s turn: %d %s, want %d", s.who, s.body, r.Status, r.Body, s.status)
		}
		if s.status != http.StatusTooManyRequests {
			continue
		}
		if b := r.ErrorBody(t); b.Code != "TOO_MANY_REQUESTS" || b.Status != 429 || !strings.Contains(b.Message, "budget") {
			t.Errorf("%s's %s turn: body %s", s.who, s.body, r.Body)
		}
		if got, want := r.Header.Get("Retry-After"), strconv.Itoa(int(s.retryAfter.Sub(Now).Seconds())); got != want {
			t.Errorf("%s's %s turn: Retry-After %q, want %s", s.who, s.body, got, want)
		}
	}
	if r := e.Call(t, http.MethodPost, ChatPath+"/legacy_chat?catname="+ToolsCat, alice, chatMsg("hi")); r.Status != http.StatusOK {
		t.Errorf("legacy turn past the budgets: %d %s", r.Status, r.Body)
	}
	if n := len(e.Recorded.All()); n != 3 {
		t.Errorf("%d interactions stored, want 3 (two answered agent turns, one legacy)", n)
	}
	want := `
# HELP catsrv_budget_refusals_total Agent turns refused (429) because the CAT's monthly or the user's daily token budget was spent, by CAT and budget.
# TYPE catsrv_budget_refusals_total counter
catsrv_budget_refusals_total{budget="monthly",cat="tools"} 2
catsrv_budget_refusals_total{budget="user_daily",cat="tools"} 1
`
	if err := testutil.GatherAndCompare(e.Metrics, strings.NewReader(want), "catsrv_budget_refusals_total"); err != nil {
		t.Error(err)
	}
}
