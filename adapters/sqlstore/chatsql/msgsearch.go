package chatsql

import (
	"context"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/adapters/sqlstore"
)

// On PostgreSQL the search document of a conversation was one text,
// body, that every turn extended (UPDATE ... SET body = body || ...): the
// row, its tsvector and its GIN entries rewritten whole, a cost that grew
// with the conversation. Since version 4 each message carries its own
// words (chat_messages.terms, with a generated tsvector and a GIN index):
// a turn inserts its messages and touches the conversation's row only for
// updated_at. A conversation matches when every term is in its name or in
// one of its messages; its score is the name's rank (weight A) plus the
// ranks of its matching messages. SQLite keeps the FTS5 document of
// version 1 (one writer at a time; the FTS5 row is rewritten per turn).

// messageSearch moves the PostgreSQL search document to the messages.
func messageSearch(dialect string) []string {
	if dialect != sqlstore.DialectPostgres {
		return nil
	}
	return []string{
		`ALTER TABLE chat_messages ADD COLUMN terms TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE chat_messages ADD COLUMN search tsvector GENERATED ALWAYS AS (
			to_tsvector('simple', left(terms, ` + strconv.Itoa(maxIndexedBodyChars) + `))) STORED`,
		`CREATE INDEX chat_messages_search ON chat_messages USING GIN (search)`,
	}
}

// backfillRound is how many messages backfillMessageTerms reads at once.
const backfillRound = 1000

// backfillMessageTerms gives the existing messages their words and
// empties the conversations' bodies, now searched through the messages.
func backfillMessageTerms(ctx context.Context, tx bun.Tx, dialect string) error {
	if dialect != sqlstore.DialectPostgres {
		return nil
	}
	var lastSeq, lastPos int64 = -1, -1
	for {
		type message struct {
			Seq     int64  `bun:"conversation_seq"`
			Pos     int64  `bun:"pos"`
			Content string `bun:"content"`
		}
		var round []message
		if err := tx.NewSelect().TableExpr("chat_messages").Column("conversation_seq", "pos", "content").
			Where("(conversation_seq, pos) > (?, ?)", lastSeq, lastPos).
			OrderExpr("conversation_seq, pos").Limit(backfillRound).Scan(ctx, &round); err != nil {
			return err
		}
		for _, m := range round {
			if _, err := tx.ExecContext(ctx, `UPDATE chat_messages SET terms = ? WHERE conversation_seq = ? AND pos = ?`,
				terms(m.Content), m.Seq, m.Pos); err != nil {
				return err
			}
		}
		if len(round) < backfillRound {
			break
		}
		lastSeq, lastPos = round[len(round)-1].Seq, round[len(round)-1].Pos
	}
	_, err := tx.ExecContext(ctx, `UPDATE chat_conversations SET body = '' WHERE body <> ''`)
	return err
}

// searchQueryPostgres is the PostgreSQL search of n terms (the
// arguments: the terms, then the CAT, the user and the limit).
func searchQueryPostgres(n int) string {
	var anyOf, all strings.Builder
	for k := range n {
		q := "plainto_tsquery('simple', ?)"
		if k > 0 {
			anyOf.WriteString(" || ")
			all.WriteString(" AND ")
		}
		anyOf.WriteString(q)
		all.WriteString("(c.search @@ " + q + " OR EXISTS (SELECT 1 FROM chat_messages m WHERE m.conversation_seq = c.seq AND m.search @@ " + q + "))")
	}
	return `SELECT c.seq, c.id, c.cat, c.user_id, c.name, c.created_at, c.updated_at,
			ts_rank(c.search, q.query) + COALESCE((SELECT SUM(ts_rank(m.search, q.query)) FROM chat_messages m
				WHERE m.conversation_seq = c.seq AND m.search @@ q.query), 0) AS score
		FROM chat_conversations c, (SELECT ` + anyOf.String() + `) AS q(query)
		WHERE c.cat = ? AND c.user_id = ? AND ` + all.String() + `
		ORDER BY score DESC, c.updated_at DESC, c.id DESC LIMIT ?`
}

// searchArgsPostgres are searchQueryPostgres's arguments.
func searchArgsPostgres(terms []string, cat, user string, limit int) []any {
	args := make([]any, 0, 3*len(terms)+3)
	for _, t := range terms {
		args = append(args, t)
	}
	args = append(args, cat, user)
	for _, t := range terms {
		args = append(args, t, t)
	}
	return append(args, limit)
}
