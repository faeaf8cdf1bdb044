// Package chatsql keeps conversations, their messages and the runtime
// configuration overrides of CATs in the database of a sqlstore.Store, in
// tables of its own migrated under the component name "chat".
//
// A chat turn and its analytics interaction are written in one transaction
// through the store's own writer (sqlstore.Store.WriteTx and AppendTx), so
// the raw log and its rollups count an answered chat as soon as RecordTurn
// returns, and a failed turn leaves no trace in either.
//
// Search is full-text and indexed: on SQLite each conversation is one
// document (the words of its name, weighted double, and of all its
// messages), in an FTS5 table kept in step by triggers; on PostgreSQL the
// name and each message have a generated tsvector column with a GIN index
// ('simple' configuration: no language-specific stemming or stop words, so
// every language is treated alike), so a turn adds its messages' words
// without rewriting its conversation's (msgsearch.go). Renames and deletes
// reach the index in the same statement.
// Times are stored as Unix nanoseconds, the same on both databases.
//
// CAT overrides carry a version from one counter row that every save
// locks, so versions follow the commit order and instances sharing the
// database can read what changed since the version they hold; a save is a
// compare-and-set on the CAT's version.
package chatsql

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

var (
	_ ports.ConversationStore  = (*Store)(nil)
	_ ports.TurnRecorder       = (*Store)(nil)
	_ ports.CatOverrideStore   = (*Store)(nil)
	_ ports.ConversationEraser = (*Store)(nil)
)

// Component names this package's schema in schema_migrations.
const Component = "chat"

// maxIndexedBodyChars bounds the message text PostgreSQL indexes per
// conversation: a tsvector holds at most 1 MiB, and a turn must never fail
// because its conversation grew long. Later text stays stored and shown,
// only not searchable.
const maxIndexedBodyChars = 100000

// migrations is the chat schema's history. Append new steps; never edit
// one that has shipped.
var migrations = []sqlstore.Migration{
	{Version: 1, Name: "conversations, messages, search index, CAT overrides", Statements: schema},
	{Version: 2, Name: "versioned CAT overrides", Statements: overrideSchema},
	{Version: 3, Name: "conversations by user, for erasure", Statements: func(string) []string {
		return []string{`CREATE INDEX chat_conversations_user ON chat_conversations (user_id)`}
	}},
	{Version: 4, Name: "search through the messages (PostgreSQL)", Statements: messageSearch, Backfill: backfillMessageTerms},
	{Version: 5, Name: "a turn's conversation and messages in one statement (PostgreSQL)", Statements: turnFunction},
	{Version: 6, Name: "the agent's tool calls and results on messages", Statements: toolColumn},
	{Version: 7, Name: "message ids", Statements: messageIDColumn},
}

func schema(dialect string) []string {
	if dialect == sqlstore.DialectPostgres {
		return append(commonSchema("BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", "BYTEA"),
			`ALTER TABLE chat_conversations ADD COLUMN search tsvector GENERATED ALWAYS AS (
				setweight(to_tsvector('simple', name_terms), 'A') ||
				setweight(to_tsvector('simple', left(body, `+strconv.Itoa(maxIndexedBodyChars)+`)), 'B')) STORED`,
			`CREATE INDEX chat_conversations_search ON chat_conversations USING GIN (search)`,
		)
	}
	return append(commonSchema("INTEGER PRIMARY KEY", "BLOB"),
		// External content: the FTS table indexes chat_conversations'
		// name_terms and body without a second copy of them. Marks count
		// as word characters, as in chat.Tokens.
		`CREATE VIRTUAL TABLE chat_fts USING fts5(name_terms, body, content='chat_conversations', content_rowid='seq',
			tokenize="unicode61 remove_diacritics 0 categories 'L* N* Co M*'")`,
		`CREATE TRIGGER chat_fts_insert AFTER INSERT ON chat_conversations BEGIN
			INSERT INTO chat_fts (rowid, name_terms, body) VALUES (new.seq, new.name_terms, new.body);
		END`,
		`CREATE TRIGGER chat_fts_delete AFTER DELETE ON chat_conversations BEGIN
			INSERT INTO chat_fts (chat_fts, rowid, name_terms, body) VALUES ('delete', old.seq, old.name_terms, old.body);
		END`,
		`CREATE TRIGGER chat_fts_update AFTER UPDATE OF name_terms, body ON chat_conversations BEGIN
			INSERT INTO chat_fts (chat_fts, rowid, name_terms, body) VALUES ('delete', old.seq, old.name_terms, old.body);
			INSERT INTO chat_fts (rowid, name_terms, body) VALUES (new.seq, new.name_terms, new.body);
		END`,
	)
}

// commonSchema is what both databases share. The search document is
// name_terms (the name's words) and body (the words of every message,
// appended as turns are recorded), both as chat.Tokens splits them, so
// either database finds exactly the words the core reference does (an
// e-mail address or a URL is several words, not one token).
func commonSchema(serial, blob string) []string {
	return []string{
		`CREATE TABLE chat_conversations (
			seq ` + serial + `,
			id TEXT NOT NULL UNIQUE,
			cat TEXT NOT NULL,
			user_id TEXT NOT NULL,
			name TEXT NOT NULL,
			name_terms TEXT NOT NULL,
			created_at BIGINT NOT NULL,
			updated_at BIGINT NOT NULL,
			body TEXT NOT NULL DEFAULT ''
		)`,
		`CREATE INDEX chat_conversations_owner ON chat_conversations (cat, user_id, updated_at, id)`,
		`CREATE TABLE chat_messages (
			conversation_seq BIGINT NOT NULL,
			pos INTEGER NOT NULL,
			role TEXT NOT NULL,
			content TEXT NOT NULL,
			model TEXT NOT NULL,
			at BIGINT NOT NULL,
			PRIMARY KEY (conversation_seq, pos)
		)`,
		`CREATE TABLE chat_cat_overrides (
			cat TEXT PRIMARY KEY,
			doc ` + blob + ` NOT NULL
		)`,
	}
}

// Store keeps conversations and CAT overrides in SQL. Safe for concurrent
// use.
type Store struct {
	log      *sqlstore.Store
	db       *bun.DB
	postgres bool
}

// Open migrates the chat schema in the store's database and returns the
// chat store on it.
func Open(ctx context.Context, s *sqlstore.Store) (*Store, error) {
	if err := s.Migrate(ctx, Component, migrations); err != nil {
		return nil, err
	}
	return &Store{log: s, db: s.DB(), postgres: s.Dialect() == sqlstore.DialectPostgres}, nil
}

// terms is text as the search index holds it: its words (chat.Tokens)
// separated by spaces.
func terms(text string) string { return strings.Join(chat.Tokens(text), " ") }

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func internal(err error) error {
	return sqlstore.Failed(err, "conversation store failed")
}

func clipID(id string) string {
	if len(id) > 64 {
		return id[:64] + "..."
	}
	return id
}

func notFound(id string) error {
	return errs.New(errs.KindNotFound, "conversation %q not found", clipID(id))
}
