package chatsql

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/chat"
)

// conversationColumns are what scanConversation reads, in order.
const conversationColumns = `seq, id, cat, user_id, name, created_at, updated_at`

type scanner interface{ Scan(dest ...any) error }

func scanConversation(row scanner) (int64, chat.Conversation, error) {
	var (
		seq              int64
		c                chat.Conversation
		created, updated int64
	)
	if err := row.Scan(&seq, &c.ID, &c.Owner.Cat, &c.Owner.UserID, &c.Name, &created, &updated); err != nil {
		return 0, chat.Conversation{}, err
	}
	c.CreatedAt, c.UpdatedAt = fromNanos(created), fromNanos(updated)
	return seq, c, nil
}

// owned returns the owner's conversation and its seq, or not found.
func owned(ctx context.Context, db bun.IDB, owner chat.Owner, id string) (int64, chat.Conversation, error) {
	seq, c, err := scanConversation(db.QueryRowContext(ctx, `SELECT `+conversationColumns+`
		FROM chat_conversations WHERE id = ? AND cat = ? AND user_id = ?`, id, owner.Cat, owner.UserID))
	if errors.Is(err, sql.ErrNoRows) {
		return 0, chat.Conversation{}, notFound(id)
	}
	if err != nil {
		return 0, chat.Conversation{}, internal(err)
	}
	return seq, c, nil
}

// conversationWithMessages reads the owner's conversation and its
// messages in one statement (one snapshot, one round trip): the
// conversation's columns on every row, a message's on each (none when it
// has no messages, the LEFT JOIN's one row of NULLs). Its values are bound
// ($n), so PostgreSQL prepares it once per connection.
const conversationWithMessages = `SELECT c.seq, c.id, c.cat, c.user_id, c.name, c.created_at, c.updated_at,
		m.role, m.content, m.model, m.at, m.tool, m.id, m.pos
	FROM chat_conversations c LEFT JOIN chat_messages m ON m.conversation_seq = c.seq
	WHERE c.id = $1 AND c.cat = $2 AND c.user_id = $3
	ORDER BY m.pos`

// Conversation returns the owner's conversation and its messages in the
// order appended.
func (s *Store) Conversation(ctx context.Context, owner chat.Owner, id string) (chat.Conversation, []chat.Message, error) {
	rows, err := s.db.DB.QueryContext(ctx, conversationWithMessages, id, owner.Cat, owner.UserID)
	if err != nil {
		return chat.Conversation{}, nil, internal(err)
	}
	defer func() { _ = rows.Close() }()
	var (
		c        chat.Conversation
		found    bool
		messages []chat.Message
	)
	for rows.Next() {
		var (
			seq, created, updated int64
			role, content, model  sql.NullString
			tool, msgID           sql.NullString
			at, pos               sql.NullInt64
		)
		if err := rows.Scan(&seq, &c.ID, &c.Owner.Cat, &c.Owner.UserID, &c.Name, &created, &updated,
			&role, &content, &model, &at, &tool, &msgID, &pos); err != nil {
			return chat.Conversation{}, nil, internal(err)
		}
		c.CreatedAt, c.UpdatedAt = fromNanos(created), fromNanos(updated)
		found = true
		if role.Valid {
			m := chat.Message{ID: msgID.String, Role: role.String, Content: content.String, Model: model.String, Time: fromNanos(at.Int64)}
			if !msgID.Valid {
				m.ID = derivedID(seq, pos.Int64)
			}
			decodeTool(tool.String, &m)
			messages = append(messages, m)
		}
	}
	if err := rows.Err(); err != nil {
		return chat.Conversation{}, nil, internal(err)
	}
	if !found {
		return chat.Conversation{}, nil, notFound(id)
	}
	return c, messages, nil
}

// Conversations lists the owner's conversations as chat.ListPage does:
// newest first by (updated_at, id), after the cursor, one more row than
// the limit telling whether a next page exists.
func (s *Store) Conversations(ctx context.Context, owner chat.Owner, page chat.Page) (chat.ConversationPage, error) {
	limit, err := chat.Limited(page.Limit)
	if err != nil {
		return chat.ConversationPage{}, err
	}
	where, args := `cat = ? AND user_id = ?`, []any{owner.Cat, owner.UserID}
	if page.After != "" {
		cur, err := chat.ParseCursor(page.After)
		if err != nil {
			return chat.ConversationPage{}, err
		}
		at := nanos(cur.UpdatedAt)
		where += ` AND (updated_at < ? OR (updated_at = ? AND id < ?))`
		args = append(args, at, at, cur.ID)
	}
	args = append(args, limit+1)
	rows, err := s.db.QueryContext(ctx, `SELECT `+conversationColumns+` FROM chat_conversations
		WHERE `+where+` ORDER BY updated_at DESC, id DESC LIMIT ?`, args...)
	if err != nil {
		return chat.ConversationPage{}, internal(err)
	}
	defer func() { _ = rows.Close() }()
	var out chat.ConversationPage
	for rows.Next() {
		_, c, err := scanConversation(rows)
		if err != nil {
			return chat.ConversationPage{}, internal(err)
		}
		out.Conversations = append(out.Conversations, c)
	}
	if err := rows.Err(); err != nil {
		return chat.ConversationPage{}, internal(err)
	}
	if len(out.Conversations) > limit {
		out.Conversations = out.Conversations[:limit]
		out.Next = chat.CursorOf(out.Conversations[limit-1])
	}
	return out, nil
}

// RenameConversation sets the owner's conversation's name and UpdatedAt;
// the search index follows in the same statement.
func (s *Store) RenameConversation(ctx context.Context, owner chat.Owner, id, name string, at time.Time) (chat.Conversation, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE chat_conversations SET name = ?, name_terms = ?, updated_at = ? WHERE id = ? AND cat = ? AND user_id = ?`,
		name, terms(name), nanos(at), id, owner.Cat, owner.UserID)
	if err != nil {
		return chat.Conversation{}, internal(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return chat.Conversation{}, internal(err)
	} else if n == 0 {
		return chat.Conversation{}, notFound(id)
	}
	_, c, err := owned(ctx, s.db, owner, id)
	return c, err
}

// DeleteConversation removes the owner's conversation and its messages
// (and with them its search document). Its interactions stay: analytics
// keeps what was answered.
func (s *Store) DeleteConversation(ctx context.Context, owner chat.Owner, id string) error {
	return internal(s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		seq, _, err := owned(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		// The conversation first: on PostgreSQL it waits for a turn that
		// holds the row, whose messages the next statement then sees.
		if _, err := tx.ExecContext(ctx, `DELETE FROM chat_conversations WHERE seq = ?`, seq); err != nil {
			return internal(err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM chat_messages WHERE conversation_seq = ?`, seq); err != nil {
			return internal(err)
		}
		return nil
	}))
}
