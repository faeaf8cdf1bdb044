package agent

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

// Decisions a person can give an "ask" call.
const (
	DecisionApprove = "approve"
	DecisionDeny    = "deny"
)

// keepDecided is how long an approval stays known after its turn stopped
// waiting, so a late or second decision answers a conflict rather than
// not found.
const keepDecided = 10 * time.Minute

// Approvals holds the "ask" calls waiting for a person, in this process:
// a decision must reach the instance running the turn (docs/chat.md).
// Safe for concurrent use.
type Approvals struct {
	mu sync.Mutex
	m  map[string]*approval
}

type approval struct {
	user, cat string
	call      chat.ToolCall
	expires   time.Time
	decision  chan bool // buffered: the one decision
	decided   bool      // a decision came, or the turn stopped waiting
	gone      time.Time // when the entry may be forgotten (set once decided)
}

// NewApprovals returns an empty registry.
func NewApprovals() *Approvals { return &Approvals{m: map[string]*approval{}} }

// open registers a pending approval of user's turn in cat.
func (a *Approvals) open(id, user, cat string, call chat.ToolCall, now, expires time.Time) *approval {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, p := range a.m { // forget the long-decided ones
		if p.decided && now.After(p.gone) {
			delete(a.m, k)
		}
	}
	p := &approval{user: user, cat: cat, call: call, expires: expires, decision: make(chan bool, 1)}
	a.m[id] = p
	return p
}

// close marks an approval as no longer awaited (decided, timed out or the
// turn ended), so that later decisions are conflicts.
func (a *Approvals) close(id string, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.m[id]; ok {
		p.decided, p.gone = true, now.Add(keepDecided)
	}
}

// Decide records a person's decision on the approval id, for the turn of
// user (or any turn, for an admin) in cat. Errors: errs.KindNotFound for an
// unknown id or another user's; errs.KindConflict when it was decided
// already or is no longer awaited; errs.KindInvalid for a decision other
// than approve or deny.
func (a *Approvals) Decide(id, user, cat string, admin bool, decision string, now time.Time) error {
	if decision != DecisionApprove && decision != DecisionDeny {
		return errs.New(errs.KindInvalid, "decision: %q is not approve or deny", decision)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.m[id]
	if !ok || p.cat != cat || (p.user != user && !admin) {
		return errs.New(errs.KindNotFound, "approval %q not found", clip(id))
	}
	if p.decided {
		return errs.New(errs.KindConflict, "approval %q was already decided or has expired", clip(id))
	}
	p.decided, p.gone = true, now.Add(keepDecided)
	p.decision <- decision == DecisionApprove
	return nil
}

// Pending is an approval awaited.
type Pending struct {
	ID, User  string
	Call      chat.ToolCall
	ExpiresAt time.Time
}

// List returns the approvals awaited in cat for user's turns (every
// user's for an admin), soonest to expire first.
func (a *Approvals) List(user, cat string, admin bool) []Pending {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []Pending
	for id, p := range a.m {
		if !p.decided && p.cat == cat && (p.user == user || admin) {
			out = append(out, Pending{ID: id, User: p.user, Call: p.call, ExpiresAt: p.expires})
		}
	}
	slices.SortFunc(out, func(x, y Pending) int {
		if c := x.ExpiresAt.Compare(y.ExpiresAt); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return out
}

// Pending counts the approvals still awaited (for tests and metrics).
func (a *Approvals) Pending() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, p := range a.m {
		if !p.decided {
			n++
		}
	}
	return n
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
