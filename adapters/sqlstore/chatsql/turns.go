package chatsql

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

// RecordTurn stores the turn in one transaction: the conversation when
// new, the messages, the search document, and the interaction with its
// rollups through the analytics store's writer. Options.AfterCommit runs
// once it is committed, when the turn had an interaction.
func (s *Store) RecordTurn(ctx context.Context, turn chat.Turn) error {
	if turn.Interaction != nil {
		if err := turn.Interaction.Validate(); err != nil {
			return err
		}
	}
	c := turn.Conversation
	if turn.New && c.ID == "" {
		return errs.New(errs.KindInvalid, "a new conversation needs an id")
	}
	err := s.log.WriteTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		seq, err := s.openForTurn(ctx, tx, turn)
		if err != nil {
			return err
		}
		if err := appendMessages(ctx, tx, seq, turn.Messages, s.postgres); err != nil {
			return err
		}
		if turn.Interaction != nil {
			return s.log.AppendTx(ctx, tx, []analytics.Interaction{*turn.Interaction})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if turn.Interaction != nil && s.opts.AfterCommit != nil {
		s.opts.AfterCommit(ctx)
	}
	return nil
}

// openForTurn creates the turn's conversation, or finds the owner's
// existing one, and returns its seq.
func (s *Store) openForTurn(ctx context.Context, tx bun.Tx, turn chat.Turn) (int64, error) {
	c := turn.Conversation
	var (
		seq       int64
		cat, user string
	)
	// On PostgreSQL the row lock holds off a concurrent delete until the
	// turn commits (or makes the turn see the conversation gone); SQLite
	// runs one write transaction at a time anyway.
	lock := ""
	if s.postgres {
		lock = " FOR UPDATE"
	}
	err := tx.QueryRowContext(ctx, `SELECT seq, cat, user_id FROM chat_conversations WHERE id = ?`+lock, c.ID).Scan(&seq, &cat, &user)
	switch {
	case err == nil && turn.New:
		return 0, errs.New(errs.KindConflict, "conversation %q already exists", clipID(c.ID))
	case err == nil && (chat.Owner{Cat: cat, UserID: user}) != c.Owner:
		return 0, notFound(c.ID)
	case err == nil:
		return seq, nil
	case !errors.Is(err, sql.ErrNoRows):
		return 0, internal(err)
	case !turn.New:
		return 0, notFound(c.ID)
	}
	err = tx.QueryRowContext(ctx, `INSERT INTO chat_conversations (id, cat, user_id, name, name_terms, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
		c.ID, c.Owner.Cat, c.Owner.UserID, c.Name, terms(c.Name), nanos(c.CreatedAt), nanos(c.UpdatedAt)).Scan(&seq)
	if err != nil {
		return 0, internal(err)
	}
	return seq, nil
}

// appendMessages adds the messages after the conversation's last, adds
// their words to the search document (on PostgreSQL each message's own,
// msgsearch.go; on SQLite the conversation's body) and moves UpdatedAt to
// the latest message's time (never back).
func appendMessages(ctx context.Context, tx bun.Tx, seq int64, messages []chat.Message, postgres bool) error {
	if len(messages) == 0 {
		return nil
	}
	var next int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(pos), -1) + 1 FROM chat_messages WHERE conversation_seq = ?`, seq).Scan(&next); err != nil {
		return internal(err)
	}
	var text strings.Builder
	latest := messages[0].Time
	for i, m := range messages {
		if postgres {
			if _, err := tx.ExecContext(ctx, `INSERT INTO chat_messages (conversation_seq, pos, role, content, model, at, terms) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				seq, next+int64(i), m.Role, m.Content, m.Model, nanos(m.Time), terms(m.Content)); err != nil {
				return internal(err)
			}
		} else {
			if _, err := tx.ExecContext(ctx, `INSERT INTO chat_messages (conversation_seq, pos, role, content, model, at) VALUES (?, ?, ?, ?, ?, ?)`,
				seq, next+int64(i), m.Role, m.Content, m.Model, nanos(m.Time)); err != nil {
				return internal(err)
			}
			text.WriteString(" ")
			text.WriteString(terms(m.Content))
		}
		if m.Time.After(latest) {
			latest = m.Time
		}
	}
	if postgres {
		if _, err := tx.ExecContext(ctx, `UPDATE chat_conversations SET
			updated_at = CASE WHEN updated_at < ? THEN ? ELSE updated_at END WHERE seq = ?`,
			nanos(latest), nanos(latest), seq); err != nil {
			return internal(err)
		}
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE chat_conversations SET body = body || ?,
		updated_at = CASE WHEN updated_at < ? THEN ? ELSE updated_at END WHERE seq = ?`,
		text.String(), nanos(latest), nanos(latest), seq); err != nil {
		return internal(err)
	}
	return nil
}
