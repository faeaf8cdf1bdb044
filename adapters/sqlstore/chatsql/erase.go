package chatsql

import (
	"context"

	"github.com/uptrace/bun"
)

// DeleteConversationsOf deletes every conversation of the user, in every
// CAT, with their messages, in one transaction. The conversations first,
// as DeleteConversation does: on PostgreSQL the statement waits for a
// turn that holds one of the rows, whose messages the next statements
// then see. The search index follows the rows (SQLite's triggers, the
// generated column on PostgreSQL).
func (s *Store) DeleteConversationsOf(ctx context.Context, userID string) (int, error) {
	n := 0
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		rows, err := tx.QueryContext(ctx, `DELETE FROM chat_conversations WHERE user_id = ? RETURNING seq`, userID)
		if err != nil {
			return err
		}
		var seqs []int64
		for rows.Next() {
			var seq int64
			if err := rows.Scan(&seq); err != nil {
				rows.Close()
				return err
			}
			seqs = append(seqs, seq)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
		n = len(seqs)
		const chunk = 500
		for len(seqs) > 0 {
			part := seqs[:min(chunk, len(seqs))]
			seqs = seqs[len(part):]
			if _, err := tx.NewDelete().TableExpr("chat_messages").Where("conversation_seq IN (?)", bun.In(part)).Exec(ctx); err != nil {
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
