// Package privacy holds what catsrv does for a person's rights over the
// data it keeps about them: erasure (Service.Erase: the account, memory,
// refresh tokens and sessions, conversations and messages, and
// interactions, through the ports that own each) and export
// (Service.Conversations: every conversation with its messages, one at a
// time, for a streamed export). A person is named by the id every store
// keys them by: the subject of their access tokens (the account id of a
// login, or the subject catsrv token minted).
package privacy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/session"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// AuditErasure is the audit event of an erasure. It names who erased
// (Actor) but not whom: the erased person appears only as ErasedRef, a
// one-way hash of their id, in the event's reason.
const AuditErasure auth.AuditKind = "erasure"

// Who asked for an erasure.
const (
	BySelf  = "self"  // the person, signed in
	ByAdmin = "admin" // an admin, over HTTP
	ByCLI   = "cli"   // an operator, with catsrv erase
)

// Deps are the ports of a Service. Export needs Users, Memory,
// Conversations and Store; erasure needs the erasers, Revocations, Audit
// and Clock.
type Deps struct {
	Users         ports.UserStore
	UserEraser    ports.UserEraser
	Refresh       ports.RefreshTokenEraser
	Revocations   ports.Revocations
	Memory        ports.MemoryStore
	Conversations ports.ConversationEraser
	Interactions  ports.InteractionEraser
	Audit         ports.AuditLog
	Clock         ports.Clock
	Store         ports.ConversationStore
	// Batch is how many interactions one transaction deletes (0: the
	// store's default).
	Batch int
}

// Service erases and exports a person's data.
type Service struct{ d Deps }

// New returns a Service.
func New(d Deps) *Service { return &Service{d: d} }

// Now is the time by the service's clock (an export's time).
func (s *Service) Now() time.Time { return s.d.Clock.Now() }

// Actor is who asked for an erasure: By is BySelf, ByAdmin or ByCLI;
// UserID and Meta are the admin's (ignored for BySelf: the erased
// person's own address is theirs too, and is not kept).
type Actor struct {
	By     string
	UserID string
	Meta   auth.RequestMeta
}

// Result is what an erasure deleted.
type Result struct {
	Account       bool // an account record existed
	Memory        bool // a memory existed
	Sessions      int  // logins (refresh families) ended
	Conversations int
	Interactions  int
}

// Empty reports whether there was nothing to erase.
func (r Result) Empty() bool {
	return !r.Account && !r.Memory && r.Sessions == 0 && r.Conversations == 0 && r.Interactions == 0
}

// ErasedRef is how the audit log names an erased person: "sha256:" and
// the first 32 hex digits of the SHA-256 of their id. It tells nothing
// about the person; an operator who already knows an id can confirm that
// it was erased.
func ErasedRef(userID string) string {
	sum := sha256.Sum256([]byte(userID))
	return "sha256:" + hex.EncodeToString(sum[:16])
}

// Resolve turns a reference to a person into their id: "<provider>:<subject>"
// with one of auth.Providers is the account of that identity
// (errs.KindNotFound when there is none); anything else is the id itself
// (an account id, or the subject of a token minted by catsrv token).
func (s *Service) Resolve(ctx context.Context, ref string) (string, error) {
	if err := CheckUser(ref); err != nil {
		return "", err
	}
	if p, sub, ok := strings.Cut(ref, ":"); ok && slices.Contains(auth.Providers, p) {
		if sub == "" {
			return "", errs.New(errs.KindInvalid, "user: %s: empty subject", p)
		}
		u, err := s.d.UserEraser.UserByIdentity(ctx, p, sub)
		if err != nil {
			return "", err
		}
		return u.ID, nil
	}
	return ref, nil
}

// CheckUser refuses a user reference no store could hold: empty, not
// UTF-8, or with a NUL byte (errs.KindInvalid). Such a reference names no
// one; refusing it keeps the stores from failing on it.
func CheckUser(ref string) error {
	switch {
	case ref == "":
		return errs.New(errs.KindInvalid, "user: empty")
	case !utf8.ValidString(ref):
		return errs.New(errs.KindInvalid, "user: not valid UTF-8")
	case strings.IndexByte(ref, 0) >= 0:
		return errs.New(errs.KindInvalid, "user: contains a NUL byte")
	}
	return nil
}

// Erase deletes everything catsrv holds about the person userID, in this
// order: their refresh tokens, with every session they opened denied
// until it would have expired (their access tokens stop working at once);
// their conversations and messages; their interactions, through the
// interaction eraser, which keeps every aggregate and index equal to the
// reference over what remains; their memory; their account. Then it
// records one AuditErasure event. Erasing again erases nothing and
// succeeds (the result is Empty), and is audited too. A failure leaves
// part of the data; erasing again finishes the work.
func (s *Service) Erase(ctx context.Context, userID string, by Actor) (Result, error) {
	if err := CheckUser(userID); err != nil {
		return Result{}, err
	}
	var r Result
	now := s.d.Clock.Now().UTC()
	tokens, err := s.d.Refresh.DeleteRefreshTokens(ctx, userID)
	if err != nil {
		return r, err
	}
	families := map[string]bool{}
	for _, t := range tokens {
		if families[t.Family] {
			continue
		}
		families[t.Family] = true
		id, until := session.Revocation(t)
		if !until.After(now) {
			continue // the session ended on its own
		}
		if _, err := s.d.Revocations.Revoke(ctx, id, until, now); err != nil {
			return r, err
		}
	}
	r.Sessions = len(families)
	if r.Conversations, err = s.d.Conversations.DeleteConversationsOf(ctx, userID); err != nil {
		return r, err
	}
	if r.Interactions, err = s.d.Interactions.DeleteInteractions(ctx, analytics.Deletion{UserID: userID}, s.d.Batch); err != nil {
		return r, err
	}
	m, err := s.d.Memory.Memory(ctx, userID)
	if err != nil {
		return r, err
	}
	r.Memory = !m.UpdatedAt.IsZero() || len(m.Preferences) > 0
	if err := s.d.Memory.DeleteMemory(ctx, userID); err != nil {
		return r, err
	}
	if r.Account, err = s.d.UserEraser.DeleteUser(ctx, userID); err != nil {
		return r, err
	}
	return r, s.audit(ctx, userID, by, r)
}

// audit records the erasure: who asked (an admin's id and request, or
// "self" or "cli" alone), the hashed id of the erased person and the
// counts, nothing else of theirs.
func (s *Service) audit(ctx context.Context, userID string, by Actor, r Result) error {
	e := auth.AuditEvent{Kind: AuditErasure}
	if by.By != BySelf {
		e.UserID, e.IP, e.UserAgent = by.UserID, by.Meta.IP, by.Meta.UserAgent
	}
	e.Reason = fmt.Sprintf("by=%s erased=%s account=%t memory=%t sessions=%d conversations=%d interactions=%d",
		by.By, ErasedRef(userID), r.Account, r.Memory, r.Sessions, r.Conversations, r.Interactions)
	e = e.Storable()
	e.Time = s.d.Clock.Now().UTC()
	if err := s.d.Audit.Record(ctx, e); err != nil {
		if errs.KindOf(err) == errs.KindUnavailable {
			return err
		}
		return errs.Wrap(errs.KindInternal, err, "cannot write the audit log")
	}
	return nil
}

// Profile is what catsrv holds about a person besides conversations: the
// account (nil for a caller known only by a token's subject) and memory.
type Profile struct {
	UserID  string
	Account *auth.User
	Memory  auth.Memory
}

// Profile reads the person's account and memory.
func (s *Service) Profile(ctx context.Context, userID string) (Profile, error) {
	p := Profile{UserID: userID}
	u, err := s.d.Users.User(ctx, userID)
	switch {
	case err == nil:
		p.Account = &u
	case errs.KindOf(err) != errs.KindNotFound:
		return Profile{}, err
	}
	if p.Memory, err = s.d.Memory.Memory(ctx, userID); err != nil {
		return Profile{}, err
	}
	return p, nil
}

// Thread is one conversation with its messages.
type Thread struct {
	Conversation chat.Conversation
	Messages     []chat.Message
}

// Conversations yields every conversation of the person in every CAT
// they have conversations in, configured now or not (CATs by name,
// conversations newest first), each with its
// messages, reading one page of a CAT's list at a time and one
// conversation's messages at a time: the export never holds them all. A
// conversation deleted while it runs is skipped. It stops at the first
// error, which it yields.
func (s *Service) Conversations(ctx context.Context, userID string) iter.Seq2[Thread, error] {
	return func(yield func(Thread, error) bool) {
		cats, err := s.d.Conversations.ConversationCats(ctx, userID)
		if err != nil {
			yield(Thread{}, err)
			return
		}
		for _, cat := range cats {
			owner := chat.Owner{Cat: cat, UserID: userID}
			page := chat.Page{Limit: chat.MaxLimit}
			for {
				p, err := s.d.Store.Conversations(ctx, owner, page)
				if err != nil {
					yield(Thread{}, err)
					return
				}
				for _, conv := range p.Conversations {
					full, msgs, err := s.d.Store.Conversation(ctx, owner, conv.ID)
					if errs.KindOf(err) == errs.KindNotFound {
						continue
					}
					if err != nil {
						yield(Thread{}, err)
						return
					}
					if !yield(Thread{Conversation: full, Messages: msgs}, nil) {
						return
					}
				}
				if p.Next == "" {
					break
				}
				page.After = p.Next
			}
		}
	}
}
