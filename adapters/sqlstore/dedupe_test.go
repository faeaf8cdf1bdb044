package sqlstore_test

import (
	"errors"
	"testing"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/errs"
)

// TestUniqueInteractionIDIsTheBackstop: the database itself refuses a
// second row of a CAT's interaction id, whoever writes it, and that
// refusal reads as a temporary unavailable error (try again: the
// interactions already stored are then skipped); the same id in another
// CAT, and rows without an id, are accepted.
func TestUniqueInteractionIDIsTheBackstop(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			s := openStore(t, b.DSN(t))
			insert := func(cat string, id any) error {
				q := "INSERT INTO interactions (occurred_at, cat, event_kind, question, answer, topic, model, persona, question_id, answer_id, user_id, conversation_id, interaction_id) " +
					"VALUES (?, ?, 'audit', 'q', 'a', 't', 'm', 'p', 'q1', 'a1', '', '', ?)"
				var at any = int64(1)
				if s.Dialect() == sqlstore.DialectPostgres {
					at = "2025-01-01T00:00:00Z"
				}
				_, err := s.DB().ExecContext(t.Context(), q, at, cat, id)
				return err
			}
			for _, row := range []struct {
				cat string
				id  any
			}{{"a", "x"}, {"b", "x"}, {"a", nil}, {"a", nil}} {
				if err := insert(row.cat, row.id); err != nil {
					t.Fatalf("insert %v: %v", row, err)
				}
			}
			err := insert("a", "x")
			if err == nil {
				t.Fatal("a second row of id x in CAT a was stored")
			}
			mapped := sqlstore.DuplicateID(err)
			if errs.KindOf(mapped) != errs.KindUnavailable || !errors.Is(mapped, errs.ErrTemporary) {
				t.Fatalf("the refusal %v reads as %v, want a temporary unavailable error", err, mapped)
			}
			other := errors.New("disk full")
			if got := sqlstore.DuplicateID(other); !errors.Is(got, other) || errors.Is(got, errs.ErrTemporary) {
				t.Error("another error was changed")
			}
		})
	}
}
