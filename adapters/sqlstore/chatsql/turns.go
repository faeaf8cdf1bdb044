package chatsql

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/adapters/sqlstore"
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
	if err := chat.CheckMessageIDs(turn.Messages); err != nil {
		return err
	}
	c := turn.Conversation
	if turn.New && c.ID == "" {
		return errs.New(errs.KindInvalid, "a new conversation needs an id")
	}
	err := s.log.WriteTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if s.postgres {
			if err := recordMessagesPostgres(ctx, tx, turn); err != nil {
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
// existing one, and returns its seq (SQLite; see recordMessagesPostgres).
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
// recordMessagesPostgres.
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
		if _, err := tx.ExecContext(ctx, `INSERT INTO chat_messages (conversation_seq, pos, role, content, model, at, tool, id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			seq, next+int64(i), m.Role, m.Content, m.Model, nanos(m.Time), encodeTool(m), storedID(m)); err != nil {
			return internal(err)
		}
		text.WriteString(" ")
		text.WriteString(terms(chat.SearchText(m)))
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

// On PostgreSQL a turn's conversation and messages are one statement, a
// call of catsrv_chat_turn (turnFunction), with its values bound ($n): the
// text is the same for every turn, so pgx prepares it once per
// connection, and no server string setting can change the values'
// meaning. A function rather than a statement with WITH queries: the
// messages of a conversation go after its last one, which the function
// reads once it holds the conversation's row lock, with a snapshot of its
// own; a single statement reads with the snapshot taken before it waited
// for the lock, and two turns racing on a conversation would then both
// pick the same positions.

// recordTurn is the call of turnFunction.
const recordTurn = `SELECT catsrv_chat_turn($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`

// turnFunction creates the function of recordTurn (PostgreSQL) as
// version 5 had it; version 6 adds the tool documents
// (turnFunctionWithTools). A new
// conversation is created, or nothing happens when one with its id exists;
// an existing one is found by its id and owner and its row locked (which
// holds off a concurrent delete until the turn commits, or makes the turn
// see the conversation gone). The messages (arrays, in order) go after the
// conversation's last and its updated_at moves to latest (the latest
// message's time, NULL without messages) unless it is later already. It
// returns the conversation's seq, or NULL when a new conversation's id
// exists or an existing one is not the owner's.
func turnFunction(dialect string) []string {
	if dialect != sqlstore.DialectPostgres {
		return nil
	}
	return []string{`CREATE FUNCTION catsrv_chat_turn(is_new boolean, conv_id text, owner_cat text, owner_user text,
	conv_name text, conv_name_terms text, created bigint, updated bigint,
	roles text[], contents text[], models text[], ats bigint[], words text[], latest bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	conv bigint;
	first_pos integer := 0;
BEGIN
	IF is_new THEN
		INSERT INTO chat_conversations (id, cat, user_id, name, name_terms, created_at, updated_at)
			VALUES (conv_id, owner_cat, owner_user, conv_name, conv_name_terms, created, GREATEST(updated, latest))
			ON CONFLICT (id) DO NOTHING RETURNING seq INTO conv;
	ELSIF latest IS NULL THEN
		SELECT seq INTO conv FROM chat_conversations
			WHERE id = conv_id AND cat = owner_cat AND user_id = owner_user FOR UPDATE;
	ELSE
		UPDATE chat_conversations SET updated_at = GREATEST(updated_at, latest)
			WHERE id = conv_id AND cat = owner_cat AND user_id = owner_user RETURNING seq INTO conv;
		IF conv IS NOT NULL THEN
			SELECT COALESCE(MAX(pos), -1) + 1 INTO first_pos FROM chat_messages WHERE conversation_seq = conv;
		END IF;
	END IF;
	IF conv IS NULL THEN
		RETURN NULL;
	END IF;
	INSERT INTO chat_messages (conversation_seq, pos, role, content, model, at, terms)
		SELECT conv, first_pos + m.k - 1, m.role, m.content, m.model, m.at, m.terms
		FROM unnest(roles, contents, models, ats, words) WITH ORDINALITY AS m(role, content, model, at, terms, k);
	RETURN conv;
END
$$`}
}

// recordMessagesPostgres is openForTurn and appendMessages on PostgreSQL,
// in one statement (recordTurn); each message keeps its own search words
// (msgsearch.go).
func recordMessagesPostgres(ctx context.Context, tx bun.Tx, turn chat.Turn) error {
	c, messages := turn.Conversation, turn.Messages
	n := len(messages)
	roles, contents, models, words, tools := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	ids := make([]*string, n) // nil: NULL, no id given
	at := make([]int64, n)
	for i, m := range messages {
		roles[i], contents[i], models[i], at[i], words[i] = m.Role, m.Content, m.Model, nanos(m.Time), terms(chat.SearchText(m))
		tools[i] = encodeTool(m)
		if m.ID != "" {
			ids[i] = &messages[i].ID
		}
	}
	var latest sql.NullInt64 // NULL without messages: GREATEST ignores it
	if n > 0 {
		latest = sql.NullInt64{Int64: nanos(latestTime(messages)), Valid: true}
	}
	var seq sql.NullInt64
	err := tx.Tx.QueryRowContext(ctx, recordTurn, turn.New, c.ID, c.Owner.Cat, c.Owner.UserID, c.Name, terms(c.Name),
		nanos(c.CreatedAt), nanos(c.UpdatedAt), roles, contents, models, at, words, latest, tools, ids).Scan(&seq)
	switch {
	case err != nil:
		return internal(err)
	case !seq.Valid && turn.New:
		return errs.New(errs.KindConflict, "conversation %q already exists", clipID(c.ID))
	case !seq.Valid:
		return notFound(c.ID)
	}
	return nil
}
