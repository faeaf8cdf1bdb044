package porttest

import (
	"fmt"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

// TestTokenUsage runs the contract of ports.TokenUsage against the
// adapter open creates (fresh and empty), whose interactions log writes:
// the tokens of a CAT, or of one of its users, at or after a time, over
// interactions of two CATs, three users, other event kinds and times on
// both sides of each bound (two of them starts of UTC days, the monthly
// budget's question), equal to the sum over the interactions at every
// bound tried.
func TestTokenUsage(t *testing.T, open func(t *testing.T) (ports.InteractionLog, ports.TokenUsage)) {
	log, usage := open(t)
	t0 := time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC)
	var all []analytics.Interaction
	for k := range 60 {
		in := analytics.Interaction{
			Time: t0.Add(time.Duration(k) * 7 * time.Minute), Cat: []string{"demo", "other"}[k%2], EventKind: analytics.EventKindAPI,
			Question: fmt.Sprintf("q%d", k), Answer: "a", Topic: "t", Model: "m", Persona: "p",
			UserID: []string{"alice", "bob", ""}[k%3], InteractionID: fmt.Sprintf("i%d", k),
			Usage: analytics.Usage{InputTokens: int64(100 + k), OutputTokens: int64(k * 3)},
		}
		if k%7 == 0 {
			in.EventKind = "other" // stored, never counted
		}
		if k%11 == 0 {
			in.Usage = analytics.Usage{} // a legacy turn
		}
		all = append(all, in)
	}
	if _, err := log.Append(t.Context(), analytics.Each(all)); err != nil {
		t.Fatal(err)
	}
	for _, since := range []time.Time{t0.Add(-23 * time.Hour), t0.Add(-time.Hour), t0, t0.Add(time.Hour), t0.Add(7 * time.Minute * 30), t0.Add(24 * time.Hour)} {
		for _, cat := range []string{"demo", "other", "none"} {
			for _, user := range []string{"", "alice", "bob", "carol"} {
				var want int64
				for _, in := range all {
					if in.Cat == cat && in.Counted() && !in.Time.Before(since) && (user == "" || in.UserID == user) {
						want += in.Usage.InputTokens + in.Usage.OutputTokens
					}
				}
				got, err := usage.TokensSince(t.Context(), cat, user, since)
				if err != nil || got != want {
					t.Errorf("TokensSince(%s, %q, %s) = %d, %v; want %d", cat, user, since.Format(time.RFC3339), got, err, want)
				}
			}
		}
	}
}
