package chatsql_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore/chatsql"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
)

// TestPostgresSearchesMessages: a conversation stored by the first schema
// (its words in the conversation's body) is found after the upgrade, its
// words moved to its messages; turns then add their words to their own
// messages and leave the conversation's body empty, so a turn's cost does
// not grow with the conversation, and every turn's words are found.
func TestPostgresSearchesMessages(t *testing.T) {
	t.Parallel() // own stores only
	log := sqltest.Open(t, sqltest.PostgresDSN(t))
	ctx := t.Context()
	if err := log.Migrate(ctx, chatsql.Component, chatsql.FirstSchema); err != nil {
		t.Fatal(err)
	}
	db := log.DB().DB
	var seq int64
	if err := db.QueryRowContext(ctx, `INSERT INTO chat_conversations (id, cat, user_id, name, name_terms, created_at, updated_at, body)
		VALUES ('old', $1, $2, 'Old one', 'old one', 1, 2, ' where is my parcel it left yesterday') RETURNING seq`,
		alice.Cat, alice.UserID).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO chat_messages (conversation_seq, pos, role, content, model, at)
		VALUES ($1, 0, 'user', 'Where is my Parcel?', '', 1), ($1, 1, 'assistant', 'It left yesterday.', 'qa', 2)`, seq); err != nil {
		t.Fatal(err)
	}

	s, err := chatsql.Open(ctx, log)
	if err != nil {
		t.Fatal(err)
	}
	expectHits := func(q string, want ...string) {
		t.Helper()
		hits, err := s.SearchConversations(ctx, alice, q, 10)
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.Conversation.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("search %q = %v, want %v", q, got, want)
		}
	}
	expectHits("parcel yesterday", "old")
	expectHits("old parcel", "old") // name and message together

	const turns = 40
	for k := range turns {
		turn := turnOf("long", k == 0, t0.Add(time.Duration(k)*time.Minute), fmt.Sprintf("question word%d", k), fmt.Sprintf("answer reply%d", k), "general")
		if err := s.RecordTurn(ctx, turn); err != nil {
			t.Fatal(err)
		}
	}
	var bodies int64
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(SUM(octet_length(body)), 0) FROM chat_conversations`).Scan(&bodies); err != nil {
		t.Fatal(err)
	}
	if bodies != 0 {
		t.Errorf("the conversations' bodies hold %d bytes, want none (the words are in the messages)", bodies)
	}
	expectHits("word0 reply39", "long")
	expectHits("word39", "long")
	expectHits("parcel word1")
}
