package chatsql

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

// RecordTurn stores the turn in one transaction: the conversation when
// new, the messages, the search document, and the interaction with its
// rollups through the analytics store's writer, which tells its follower
// (the column index) of the interaction once it has committed
// (sqlstore.Store.TellCommits).
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
		if s.postgres {
			seq, err := openForTurnPostgres(ctx, tx, turn)
			if err != nil {
				return err
			}
			if err := appendMessagesPostgres(ctx, tx, seq, turn.Messages); err != nil {
				return err
			}
		} else {
			seq, err := s.openForTurn(ctx, tx, turn)
			if err != nil {
				return err
			}
			if err := appendMessages(ctx, tx, seq, turn.Messages); err != nil {
				return err
			}
		}
		if turn.Interaction != nil {
			return s.log.AppendTx(ctx, tx, []analytics.Interaction{*turn.Interaction})
		}
		return nil
	})
	return err
}

// openForTurn creates the turn's conversation, or finds the owner's
// existing one, and returns its seq (SQLite; see openForTurnPostgres).
func (s *Store) openForTurn(ctx context.Context, tx bun.Tx, turn chat.Turn) (int64, error) {
	c := turn.Conversation
	var (
		seq       int64
		cat, user string
	)
	// SQLite runs one write transaction at a time: no row lock needed.
	err := tx.QueryRowContext(ctx, `SELECT seq, cat, user_id FROM chat_conversations WHERE id = ?`, c.ID).Scan(&seq, &cat, &user)
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
// their words to the conversation's search document (its body) and moves
// UpdatedAt to the latest message's time (never back). SQLite; see
// appendMessagesPostgres.
func appendMessages(ctx context.Context, tx bun.Tx, seq int64, messages []chat.Message) error {
	if len(messages) == 0 {
		return nil
	}
	var next int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(pos), -1) + 1 FROM chat_messages WHERE conversation_seq = ?`, seq).Scan(&next); err != nil {
		return internal(err)
	}
	var text strings.Builder
	latest := latestTime(messages)
	for i, m := range messages {
		if _, err := tx.ExecContext(ctx, `INSERT INTO chat_messages (conversation_seq, pos, role, content, model, at) VALUES (?, ?, ?, ?, ?, ?)`,
			seq, next+int64(i), m.Role, m.Content, m.Model, nanos(m.Time)); err != nil {
			return internal(err)
		}
		text.WriteString(" ")
		text.WriteString(terms(m.Content))
	}
	if _, err := tx.ExecContext(ctx, `UPDATE chat_conversations SET body = body || ?,
		updated_at = CASE WHEN updated_at < ? THEN ? ELSE updated_at END WHERE seq = ?`,
		text.String(), nanos(latest), nanos(latest), seq); err != nil {
		return internal(err)
	}
	return nil
}

// latestTime is the latest of the messages' times (there is at least one).
func latestTime(messages []chat.Message) time.Time {
	latest := messages[0].Time
	for _, m := range messages[1:] {
		if m.Time.After(latest) {
			latest = m.Time
		}
	}
	return latest
}

// On PostgreSQL a turn's statements go to the driver with their values
// bound ($n), not written into the text by bun: each statement's text is
// the same for every turn, so pgx prepares it once per connection (its
// statement cache) and a turn costs one round trip per statement, without
// the server parsing and planning it again. Their plans do not depend on
// the values (look-ups by a unique key), so the generic plan PostgreSQL
// settles on after five runs is the right one. Values travel as
// parameters, so no server string setting can change their meaning.

const (
	// findConversation locks the conversation's row: that holds off a
	// concurrent delete until the turn commits (or makes the turn see the
	// conversation gone).
	findConversation = `SELECT seq, cat, user_id FROM chat_conversations WHERE id = $1 FOR UPDATE`
	// createConversation creates a new conversation, or nothing (no row
	// returned) when one with its id exists.
	createConversation = `INSERT INTO chat_conversations (id, cat, user_id, name, name_terms, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING RETURNING seq`
	// addMessages adds the messages ($2…$6, arrays in order) after the
	// conversation's last and moves its updated_at to $7 unless it is
	// later already, in one statement.
	addMessages = `WITH moved AS (
			UPDATE chat_conversations SET updated_at = GREATEST(updated_at, $7::bigint) WHERE seq = $1
		)
		INSERT INTO chat_messages (conversation_seq, pos, role, content, model, at, terms)
		SELECT $1, n.next + m.k - 1, m.role, m.content, m.model, m.at, m.terms
		FROM (SELECT COALESCE(MAX(pos), -1) + 1 AS next FROM chat_messages WHERE conversation_seq = $1) n,
			unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[]) WITH ORDINALITY
				AS m(role, content, model, at, terms, k)`
)

// openForTurnPostgres is openForTurn on PostgreSQL: one statement, the
// look-up of an existing conversation or the insert of a new one.
func openForTurnPostgres(ctx context.Context, tx bun.Tx, turn chat.Turn) (int64, error) {
	c := turn.Conversation
	var seq int64
	if turn.New {
		err := tx.Tx.QueryRowContext(ctx, createConversation,
			c.ID, c.Owner.Cat, c.Owner.UserID, c.Name, terms(c.Name), nanos(c.CreatedAt), nanos(c.UpdatedAt)).Scan(&seq)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return 0, errs.New(errs.KindConflict, "conversation %q already exists", clipID(c.ID))
		case err != nil:
			return 0, internal(err)
		}
		return seq, nil
	}
	var cat, user string
	err := tx.Tx.QueryRowContext(ctx, findConversation, c.ID).Scan(&seq, &cat, &user)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, notFound(c.ID)
	case err != nil:
		return 0, internal(err)
	case (chat.Owner{Cat: cat, UserID: user}) != c.Owner:
		return 0, notFound(c.ID)
	}
	return seq, nil
}

// appendMessagesPostgres is appendMessages on PostgreSQL, in one
// statement; each message keeps its own search words (msgsearch.go).
func appendMessagesPostgres(ctx context.Context, tx bun.Tx, seq int64, messages []chat.Message) error {
	if len(messages) == 0 {
		return nil
	}
	n := len(messages)
	roles, contents, models, words := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	at := make([]int64, n)
	for i, m := range messages {
		roles[i], contents[i], models[i], at[i], words[i] = m.Role, m.Content, m.Model, nanos(m.Time), terms(m.Content)
	}
	if _, err := tx.Tx.ExecContext(ctx, addMessages, seq, roles, contents, models, at, words, nanos(latestTime(messages))); err != nil {
		return internal(err)
	}
	return nil
}
