package analytics

import (
	"time"

	"github.com/catsrv/catsrv/core/errs"
)

// Deletion selects stored interactions to delete: retention (everything of
// a CAT older than a time) and erasure (everything of one user). The
// fields combine with AND; an empty field does not restrict. A deletion
// must name a time or a user, so that no zero value deletes the whole log.
type Deletion struct {
	Cat    string    // the CAT; "" = every CAT
	Before time.Time // interactions strictly before this time; zero = any time
	UserID string    // interactions of this user; "" = any user
}

// Validate reports a deletion that names neither a time nor a user.
func (d Deletion) Validate() error {
	if d.Before.IsZero() && d.UserID == "" {
		return errs.New(errs.KindInvalid, "a deletion names a time or a user")
	}
	return nil
}

// Selects reports whether d selects the interaction: the reference every
// store's deletion must agree with. It ignores the event kind: a deletion
// removes stored interactions of every kind.
func (d Deletion) Selects(i Interaction) bool {
	if d.Cat != "" && i.Cat != d.Cat {
		return false
	}
	if !d.Before.IsZero() && !i.Time.Before(d.Before) {
		return false
	}
	if d.UserID != "" && i.UserID != d.UserID {
		return false
	}
	return true
}
