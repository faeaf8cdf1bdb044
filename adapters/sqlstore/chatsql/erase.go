package chatsql

import (
	"context"

	"github.com/uptrace/bun"
)

// ConversationCats returns the CATs of the user's conversations, by name
// (read through the user_id index).
func (s *Store) ConversationCats(ctx context.Context, userID string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT cat FROM chat_conversations WHERE user_id = ? ORDER BY cat`, userID)
	if err != nil {
		return nil, internal(err)
	}
	defer rows.Close()
	cats := []string{}
	for rows.Next() {
		var cat string
		if err := rows.Scan(&cat); err != nil {
			return nil, internal(err)
		}
		cats = append(cats, cat)
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err)
	}
	return cats, nil
}

// DeleteConversationsOf deletes every conversation of the user, in every
// CAT, with their messages, in one transaction. The conversations first,
// as DeleteConversation does: on PostgreSQL the statement waits for a
// turn that holds one of the rows, whose messages the next statements
// then see. The search index follows the rows (SQLite's triggers, the
// generated column on PostgreSQL).
func (s *Store) DeleteConversationsOf(ctx context.Context, userID string) (int, error) {
	n := 0
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		seqs, err := deletedSeqs(ctx, tx, userID)
		if err != nil {
			return err
		}
		n = len(seqs)
		const chunk = 500
		for len(seqs) > 0 {
			part := seqs[:min(chunk, len(seqs))]
			seqs = seqs[len(part):]
			if _, err := tx.NewDelete().TableExpr("chat_messages").Where("conversation_seq IN (?)", bun.List(part)).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, internal(err)
	}
	return n, nil
}

// deletedSeqs deletes the user's conversations and returns their seqs.
func deletedSeqs(ctx context.Context, tx bun.Tx, userID string) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, `DELETE FROM chat_conversations WHERE user_id = ? RETURNING seq`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var seqs []int64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, err
		}
		seqs = append(seqs, seq)
	}
	return seqs, rows.Err()
}
