package catconfig

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// Bounds of cat.feedback.reasons.
const (
	MaxFeedbackReasons     = 50
	MaxFeedbackReasonRunes = 64
)

// Feedback holds the cat.feedback.* keys. Reasons are what a person may
// give as the reason of a rating; none: a rating takes no reason.
type Feedback struct {
	Reasons []string `config:"reasons" json:"reasons"`
}

// Budget holds the cat.budget.* keys: the agent's tokens (input and
// output) a CAT may use in a calendar month (UTC), and one user in a day
// (UTC); 0 sets no budget.
type Budget struct {
	MonthlyTokens   int `config:"monthly_tokens" json:"monthly_tokens"`
	UserDailyTokens int `config:"user_daily_tokens" json:"user_daily_tokens"`
}

// AllowsReason reports whether reason is one of the CAT's feedback
// reasons.
func (f Feedback) AllowsReason(reason string) bool { return slices.Contains(f.Reasons, reason) }

func (f Feedback) validate() error {
	if len(f.Reasons) > MaxFeedbackReasons {
		return errs.New(errs.KindInvalid, "cat.feedback.reasons: %d reasons, at most %d", len(f.Reasons), MaxFeedbackReasons)
	}
	for i, r := range f.Reasons {
		switch {
		case strings.TrimSpace(r) != r || r == "":
			return errs.New(errs.KindInvalid, "cat.feedback.reasons[%d]: %q must be non-empty, without spaces around it", i, r)
		case utf8.RuneCountInString(r) > MaxFeedbackReasonRunes:
			return errs.New(errs.KindInvalid, "cat.feedback.reasons[%d]: longer than %d characters", i, MaxFeedbackReasonRunes)
		case analytics.CheckText("reason", r) != nil:
			return errs.New(errs.KindInvalid, "cat.feedback.reasons[%d]: not valid UTF-8 or with a NUL byte", i)
		case slices.Contains(f.Reasons[:i], r):
			return errs.New(errs.KindInvalid, "cat.feedback.reasons[%d]: %q is given twice", i, r)
		}
	}
	return nil
}

func (b Budget) validate() error {
	if b.MonthlyTokens < 0 {
		return errs.New(errs.KindInvalid, "cat.budget.monthly_tokens: %d is negative (0: no budget)", b.MonthlyTokens)
	}
	if b.UserDailyTokens < 0 {
		return errs.New(errs.KindInvalid, "cat.budget.user_daily_tokens: %d is negative (0: no budget)", b.UserDailyTokens)
	}
	return nil
}
