package catconfig

import (
	"time"

	"github.com/catsrv/catsrv/core/errs"
)

// MaxRetentionDays bounds the retention keys: a hundred years.
const MaxRetentionDays = 36500

// AnalyticsKeys holds the analytics.* keys. RetentionDays is how many
// days of interactions the CAT keeps; 0 (unset) keeps them forever.
type AnalyticsKeys struct {
	RetentionDays int `config:"retention_days" json:"retention_days"`
}

// ChatLogKeys holds the chat.* keys. RetentionDays is how many days a
// conversation is kept after its last activity; 0 (unset) keeps
// conversations forever.
type ChatLogKeys struct {
	RetentionDays int `config:"retention_days" json:"retention_days"`
}

// InteractionRetention is how long the CAT keeps interactions, 0 for
// forever.
func (c Cat) InteractionRetention() time.Duration {
	return days(c.Analytics.RetentionDays)
}

// ConversationRetention is how long the CAT keeps a conversation after its
// last activity, 0 for forever.
func (c Cat) ConversationRetention() time.Duration {
	return days(c.ChatLog.RetentionDays)
}

func days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }

func (c Cat) validateRetention() error {
	if d := c.Analytics.RetentionDays; d < 0 || d > MaxRetentionDays {
		return errs.New(errs.KindInvalid, "analytics.retention_days: %d is not between 0 (keep forever) and %d", d, MaxRetentionDays)
	}
	if d := c.ChatLog.RetentionDays; d < 0 || d > MaxRetentionDays {
		return errs.New(errs.KindInvalid, "chat.retention_days: %d is not between 0 (keep forever) and %d", d, MaxRetentionDays)
	}
	return nil
}
