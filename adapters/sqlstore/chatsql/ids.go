package chatsql

import (
	"database/sql"
	"strconv"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/chat"
)

// Messages are named (chat.Message.ID): the service names each message of
// a turn, and the id is kept in chat_messages.id. A message given without
// one, stored before the column existed, or by an older instance during a
// rolling deploy (which still calls the turn function without ids), has
// none stored (NULL) and reads back as derivedID: stable, since a message's conversation seq and
// position never change, and never a name the service makes (those are
// hex). No index on the id: a message is read with its conversation,
// never by its id alone.

// messageIDColumn adds chat_messages.id and, on PostgreSQL, a
// catsrv_chat_turn taking the messages' ids too. The function without
// them stays for older instances.
func messageIDColumn(dialect string) []string {
	out := []string{`ALTER TABLE chat_messages ADD COLUMN id TEXT`}
	if dialect == sqlstore.DialectPostgres {
		out = append(out, turnFunctionWithIDs)
	}
	return out
}

// derivedID names a message stored without an id.
func derivedID(seq int64, pos int64) string {
	return "m" + strconv.FormatInt(seq, 10) + "-" + strconv.FormatInt(pos, 10)
}

// storedID is the id column of a message: NULL without an id.
func storedID(m chat.Message) sql.NullString {
	return sql.NullString{String: m.ID, Valid: m.ID != ""}
}

// turnFunctionWithIDs is turnFunctionWithTools with one more array, the
// messages' ids.
const turnFunctionWithIDs = `CREATE FUNCTION catsrv_chat_turn(is_new boolean, conv_id text, owner_cat text, owner_user text,
	conv_name text, conv_name_terms text, created bigint, updated bigint,
	roles text[], contents text[], models text[], ats bigint[], words text[], latest bigint, tools text[], ids text[]) RETURNS bigint
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
	INSERT INTO chat_messages (conversation_seq, pos, role, content, model, at, terms, tool, id)
		SELECT conv, first_pos + m.k - 1, m.role, m.content, m.model, m.at, m.terms, m.tool, m.id
		FROM unnest(roles, contents, models, ats, words, tools, ids) WITH ORDINALITY AS m(role, content, model, at, terms, tool, id, k);
	RETURN conv;
END
$$`
