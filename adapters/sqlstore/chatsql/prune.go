package chatsql

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/ports"
)

var _ ports.ConversationPruner = (*Store)(nil)

// DefaultPruneBatch is how many conversations PruneConversations deletes
// per transaction when its caller names no batch size.
const DefaultPruneBatch = 500

// PruneConversations deletes the CAT's conversations whose last activity
// (updated_at) is before `before`, with their messages and search text,
// at most batch per transaction (batch <= 0: DefaultPruneBatch), and
// returns how many (ports.ConversationPruner). The owner index (cat,
// user_id, updated_at, id) narrows the scan to the CAT.
func (s *Store) PruneConversations(ctx context.Context, cat string, before time.Time, batch int) (int, error) {
	if batch <= 0 {
		batch = DefaultPruneBatch
	}
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		var n int
		err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			var seqs []int64
			if err := tx.NewSelect().TableExpr("chat_conversations").Column("seq").
				Where("cat = ? AND updated_at < ?", cat, nanos(before)).
				OrderExpr("seq").Limit(int64(batch)).Scan(ctx, &seqs); err != nil {
				return internal(err)
			}
			n = len(seqs)
			if n == 0 {
				return nil
			}
			// The conversations first, as DeleteConversation does.
			if _, err := tx.NewDelete().TableExpr("chat_conversations").Where("seq IN (?)", bun.List(seqs)).Exec(ctx); err != nil {
				return internal(err)
			}
			if _, err := tx.NewDelete().TableExpr("chat_messages").Where("conversation_seq IN (?)", bun.List(seqs)).Exec(ctx); err != nil {
				return internal(err)
			}
			return nil
		})
		if err != nil {
			return total, internal(err)
		}
		total += n
		if n < batch {
			return total, nil
		}
	}
}
