package chatsql

import (
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/core/chat"
)

// TestMessageIDsMigration brings a schema of the release before message
// ids (version 6) to the current one: messages stored before read back
// with ids derived from their place, the same at every read; new turns
// keep the ids they are given; and on PostgreSQL an instance of the older
// release, still calling the turn function without ids, keeps working
// during a rolling deploy, its messages named like the old ones.
func TestMessageIDsMigration(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range sqltest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			ctx := t.Context()
			log := sqltest.Open(t, b.DSN(t))
			if err := log.Migrate(ctx, Component, migrations[:6]); err != nil {
				t.Fatal(err)
			}
			db := log.DB()
			at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC).UnixNano()
			var seq int64
			if err := db.QueryRowContext(ctx, `INSERT INTO chat_conversations (id, cat, user_id, name, name_terms, created_at, updated_at)
				VALUES ('old', 'demo', 'alice', 'Old', 'old', ?, ?) RETURNING seq`, at, at).Scan(&seq); err != nil {
				t.Fatal(err)
			}
			for pos, role := range []string{chat.RoleUser, chat.RoleAssistant} {
				if _, err := db.ExecContext(ctx, `INSERT INTO chat_messages (conversation_seq, pos, role, content, model, at) VALUES (?, ?, ?, 'text', '', ?)`,
					seq, pos, role, at); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Open(ctx, log)
			if err != nil {
				t.Fatal(err)
			}
			alice := chat.Owner{Cat: "demo", UserID: "alice"}
			ids := func() []string {
				t.Helper()
				_, msgs, err := s.Conversation(ctx, alice, "old")
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, m := range msgs {
					out = append(out, m.ID)
				}
				return out
			}
			old := ids()
			if len(old) != 2 || old[0] != derivedID(seq, 0) || old[1] != derivedID(seq, 1) {
				t.Fatalf("ids of the messages stored before: %q", old)
			}
			if err := s.RecordTurn(ctx, chat.Turn{Conversation: chat.Conversation{ID: "old", Owner: alice},
				Messages: []chat.Message{{ID: "ab12", Role: chat.RoleUser, Content: "new", Time: time.Unix(0, at)}}}); err != nil {
				t.Fatal(err)
			}
			want := append(old, "ab12")
			if log.Dialect() == sqlstore.DialectPostgres {
				// The release before calls the function of version 6.
				if _, err := db.ExecContext(ctx, `SELECT catsrv_chat_turn(false, 'old', 'demo', 'alice', '', '', 0, 0,
					ARRAY['user'], ARRAY['from an older instance'], ARRAY[''], ARRAY[?::bigint], ARRAY['older'], ?, ARRAY[''])`, at, at); err != nil {
					t.Fatalf("the older turn function: %v", err)
				}
				want = append(want, derivedID(seq, 3))
			}
			got := ids()
			if len(got) != len(want) {
				t.Fatalf("ids %q, want %q", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("ids %q, want %q", got, want)
					break
				}
			}
		})
	}
}
