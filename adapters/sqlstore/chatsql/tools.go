package chatsql

import (
	"encoding/json"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/chat"
)

// The agent's tool calls are messages too (chat.Message.ToolCalls on an
// assistant message, ToolCallID, ToolName, Outcome and Duration on a tool
// message). They are kept in one column of chat_messages, tool: a JSON
// document, empty for a message without them. Their names join the
// message's search words (chat.SearchText), so a search finds them.

// toolColumn adds chat_messages.tool and, on PostgreSQL, gives
// catsrv_chat_turn the tool documents.
func toolColumn(dialect string) []string {
	out := []string{`ALTER TABLE chat_messages ADD COLUMN tool TEXT NOT NULL DEFAULT ''`}
	if dialect == sqlstore.DialectPostgres {
		out = append(out,
			`DROP FUNCTION catsrv_chat_turn(boolean, text, text, text, text, text, bigint, bigint, text[], text[], text[], bigint[], text[], bigint)`,
			turnFunctionWithTools)
	}
	return out
}

// turnFunctionWithTools is turnFunction with one more array, the
// messages' tool documents.
const turnFunctionWithTools = `CREATE FUNCTION catsrv_chat_turn(is_new boolean, conv_id text, owner_cat text, owner_user text,
	conv_name text, conv_name_terms text, created bigint, updated bigint,
	roles text[], contents text[], models text[], ats bigint[], words text[], latest bigint, tools text[]) RETURNS bigint
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
	INSERT INTO chat_messages (conversation_seq, pos, role, content, model, at, terms, tool)
		SELECT conv, first_pos + m.k - 1, m.role, m.content, m.model, m.at, m.terms, m.tool
		FROM unnest(roles, contents, models, ats, words, tools) WITH ORDINALITY AS m(role, content, model, at, terms, tool, k);
	RETURN conv;
END
$$`

// toolDoc is the stored form of a message's tool fields.
type toolDoc struct {
	Calls      []toolCallDoc `json:"calls,omitempty"`
	CallID     string        `json:"call_id,omitempty"`
	Name       string        `json:"name,omitempty"`
	Outcome    string        `json:"outcome,omitempty"`
	DurationNS int64         `json:"duration_ns,omitempty"`
}

type toolCallDoc struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// encodeTool is the tool column of a message: "" without tool fields.
func encodeTool(m chat.Message) string {
	if len(m.ToolCalls) == 0 && m.Role != chat.RoleTool {
		return ""
	}
	d := toolDoc{CallID: m.ToolCallID, Name: m.ToolName, Outcome: m.Outcome, DurationNS: int64(m.Duration)}
	for _, c := range m.ToolCalls {
		d.Calls = append(d.Calls, toolCallDoc(c))
	}
	b, err := json.Marshal(d)
	if err != nil { // strings and ints only: cannot fail
		return ""
	}
	return string(b)
}

// decodeTool sets the message's tool fields from its tool column. A
// document that cannot be read leaves them empty rather than losing the
// conversation.
func decodeTool(doc string, m *chat.Message) {
	if doc == "" {
		return
	}
	var d toolDoc
	if json.Unmarshal([]byte(doc), &d) != nil {
		return
	}
	for _, c := range d.Calls {
		m.ToolCalls = append(m.ToolCalls, chat.ToolCall(c))
	}
	m.ToolCallID, m.ToolName, m.Outcome, m.Duration = d.CallID, d.Name, d.Outcome, time.Duration(d.DurationNS)
}
