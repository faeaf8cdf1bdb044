package chat

import (
	"strings"
	"unicode/utf8"

	"github.com/catsrv/catsrv/core/errs"
)

// CheckID refuses a conversation id that no conversation can have because
// no back end can hold it: bytes that are not UTF-8, or a NUL byte
// (PostgreSQL refuses it in text, SQLite and the SQL writer cut text at
// it). Such an id is malformed input (errs.KindInvalid), told apart from a
// well-formed id that names no conversation of the caller, which the
// stores answer with errs.KindNotFound. Every id a client sends is checked
// before it reaches a store.
func CheckID(id string) error {
	switch {
	case !utf8.ValidString(id):
		return errs.New(errs.KindInvalid, "conversation id: not valid UTF-8")
	case strings.IndexByte(id, 0) >= 0:
		return errs.New(errs.KindInvalid, "conversation id: contains a NUL byte")
	}
	return nil
}

// MaxMessageIDBytes bounds a message id: it names the answer's
// interaction too (analytics.MaxInteractionIDBytes).
const MaxMessageIDBytes = 256

// CheckMessageIDs refuses, as errs.KindInvalid, messages of a turn whose
// id no store can keep: one chat.CheckID refuses or longer than
// MaxMessageIDBytes. An empty id is allowed: the store names the message.
func CheckMessageIDs(messages []Message) error {
	for i, m := range messages {
		switch {
		case len(m.ID) > MaxMessageIDBytes:
			return errs.New(errs.KindInvalid, "message %d: id longer than %d bytes", i+1, MaxMessageIDBytes)
		case CheckID(m.ID) != nil:
			return errs.New(errs.KindInvalid, "message %d: id not valid UTF-8 or with a NUL byte", i+1)
		}
	}
	return nil
}
