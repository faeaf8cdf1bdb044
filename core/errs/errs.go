// Package errs gives core errors a kind, so that each adapter at the edge
// (the HTTP app, the command line) can map a failure to its own vocabulary in
// one place without parsing messages or knowing which package failed.
package errs

import (
	"errors"
	"fmt"
)

// Kind classifies a failure by what the caller can do about it.
type Kind int

// The kinds of failure the core reports.
const (
	// KindInternal is anything unexpected; its message must not reach a client.
	KindInternal Kind = iota
	// KindInvalid means the caller's input is malformed or out of range.
	KindInvalid
	// KindNotFound means the named thing does not exist (or is not the caller's).
	KindNotFound
	// KindUnauthorized means the caller is not authenticated.
	KindUnauthorized
	// KindForbidden means the caller is authenticated but not allowed.
	KindForbidden
	// KindConflict means the request clashes with the current state.
	KindConflict
	// KindUnavailable means a dependency is down or not configured.
	KindUnavailable
	// KindTooLarge means the input exceeds a configured size limit.
	KindTooLarge
	// KindRateLimited means the caller sent too many requests and must
	// wait before trying again.
	KindRateLimited
)

var kindNames = map[Kind]string{
	KindInternal:     "internal",
	KindInvalid:      "invalid",
	KindNotFound:     "not found",
	KindUnauthorized: "unauthorized",
	KindForbidden:    "forbidden",
	KindConflict:     "conflict",
	KindUnavailable:  "unavailable",
	KindTooLarge:     "too large",
	KindRateLimited:  "rate limited",
}

// String names the kind.
func (k Kind) String() string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Error is a failure with a kind and a message that is safe to show a client.
// Err, when set, is the underlying cause: for logs only.
type Error struct {
	Kind    Kind
	Message string
	Err     error
}

// Error returns the client-safe message followed by the cause, for logs.
func (e *Error) Error() string {
	if e.Err == nil {
		return e.Message
	}
	return e.Message + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// New returns an error of the kind with a formatted client-safe message.
func New(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an error of the kind with a client-safe message and a cause
// that stays out of client responses.
func Wrap(kind Kind, cause error, message string) *Error {
	return &Error{Kind: kind, Message: message, Err: cause}
}

// KindOf reports the kind of err: the kind of the outermost *Error in its
// chain, or KindInternal when there is none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// PublicMessage returns the message of the outermost *Error in err's chain,
// or fallback when err carries no client-safe message.
func PublicMessage(err error, fallback string) string {
	var e *Error
	if errors.As(err, &e) && e.Kind != KindInternal {
		return e.Message
	}
	return fallback
}

// ErrTemporary marks the cause of a failure that is expected to pass
// without anyone acting (a database connection lost, a write lock held for
// a while): the HTTP layer tells the client when to try again
// (Retry-After). Test for it with errors.Is.
var ErrTemporary = errors.New("temporary failure")

// Temporary returns cause marked with ErrTemporary, for the cause of an
// errs.KindUnavailable error.
func Temporary(cause error) error {
	if cause == nil {
		return ErrTemporary
	}
	return fmt.Errorf("%w: %w", ErrTemporary, cause)
}
