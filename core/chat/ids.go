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
