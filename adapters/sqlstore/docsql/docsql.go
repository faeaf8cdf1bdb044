// Package docsql keeps CATs' documents, their chunks and the embeddings
// cache in the database of a sqlstore.Store, in tables of its own
// migrated under the component name "documents".
//
// Keyword search runs on the database's own full-text index, updated in
// the statement that writes a chunk and never rebuilt: an FTS5 table over
// the chunks' words on SQLite (external content, kept in step by
// triggers), a generated tsvector column with a GIN index on PostgreSQL
// ('simple' configuration, as the conversation search). Both index the
// words chat.Tokens finds in a chunk's heading path and text, and a query
// reaches them only as such words, so no input is read as index syntax.
// Embeddings are float32 vectors (little-endian bytes) keyed by (content
// hash, model).
package docsql

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/core/knowledge"
	"github.com/catsrv/catsrv/ports"
)

var _ ports.DocumentStore = (*Store)(nil)

// Component names this package's schema in schema_migrations.
const Component = "documents"

// migrations is the documents schema's history. Append new steps; never
// edit one that has shipped.
var migrations = []sqlstore.Migration{
	{Version: 1, Name: "documents, chunks, keyword index, embeddings", Statements: schema},
}

func schema(dialect string) []string {
	serial, blob := "INTEGER PRIMARY KEY", "BLOB"
	if dialect == sqlstore.DialectPostgres {
		serial, blob = "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", "BYTEA"
	}
	common := []string{
		`CREATE TABLE doc_documents (
			cat TEXT NOT NULL,
			id TEXT NOT NULL,
			title TEXT NOT NULL,
			url TEXT NOT NULL,
			origin TEXT NOT NULL,
			format TEXT NOT NULL,
			bytes BIGINT NOT NULL,
			chunks INTEGER NOT NULL,
			created_at BIGINT NOT NULL,
			PRIMARY KEY (cat, id)
		)`,
		`CREATE TABLE doc_chunks (
			seq ` + serial + `,
			cat TEXT NOT NULL,
			doc_id TEXT NOT NULL,
			idx INTEGER NOT NULL,
			chunk_id TEXT NOT NULL,
			heading TEXT NOT NULL,
			body TEXT NOT NULL,
			tokens INTEGER NOT NULL,
			hash TEXT NOT NULL,
			terms TEXT NOT NULL,
			UNIQUE (cat, chunk_id)
		)`,
		`CREATE INDEX doc_chunks_doc ON doc_chunks (cat, doc_id, idx)`,
		`CREATE INDEX doc_chunks_hash ON doc_chunks (hash)`,
		`CREATE TABLE doc_embeddings (
			hash TEXT NOT NULL,
			model TEXT NOT NULL,
			vec ` + blob + ` NOT NULL,
			PRIMARY KEY (hash, model)
		)`,
	}
	if dialect == sqlstore.DialectPostgres {
		return append(common,
			`ALTER TABLE doc_chunks ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('simple', terms)) STORED`,
			`CREATE INDEX doc_chunks_search ON doc_chunks USING GIN (search)`,
		)
	}
	return append(common,
		`CREATE VIRTUAL TABLE doc_fts USING fts5(terms, content='doc_chunks', content_rowid='seq',
			tokenize="unicode61 remove_diacritics 0 categories 'L* N* Co M*'")`,
		`CREATE TRIGGER doc_fts_insert AFTER INSERT ON doc_chunks BEGIN
			INSERT INTO doc_fts (rowid, terms) VALUES (new.seq, new.terms);
		END`,
		`CREATE TRIGGER doc_fts_delete AFTER DELETE ON doc_chunks BEGIN
			INSERT INTO doc_fts (doc_fts, rowid, terms) VALUES ('delete', old.seq, old.terms);
		END`,
	)
}

// Store keeps documents in SQL. Safe for concurrent use.
type Store struct {
	db       *bun.DB
	postgres bool
}

// Open migrates the documents schema in the store's database and returns
// the document store on it.
func Open(ctx context.Context, s *sqlstore.Store) (*Store, error) {
	if err := s.Migrate(ctx, Component, migrations); err != nil {
		return nil, err
	}
	return &Store{db: s.DB(), postgres: s.Dialect() == sqlstore.DialectPostgres}, nil
}

func internal(err error) error { return sqlstore.Failed(err, "document store failed") }

func notFound(id string) error {
	if len(id) > 64 {
		id = id[:64] + "..."
	}
	return errs.New(errs.KindNotFound, "document %q not found", id)
}

// chunkRows bounds the chunks of one INSERT (10 parameters each).
const chunkRows = 200

// PutDocument implements ports.DocumentStore.
func (s *Store) PutDocument(ctx context.Context, doc knowledge.Document) (bool, error) {
	created := false
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO doc_documents (cat, id, title, url, origin, format, bytes, chunks, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (cat, id) DO NOTHING`,
			doc.Cat, doc.ID, doc.Title, doc.URL, doc.Origin, doc.Format, doc.Bytes, len(doc.Chunks), doc.CreatedAt.UnixNano())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		created = true
		for start := 0; start < len(doc.Chunks); start += chunkRows {
			part := doc.Chunks[start:min(len(doc.Chunks), start+chunkRows)]
			var q strings.Builder
			q.WriteString(`INSERT INTO doc_chunks (cat, doc_id, idx, chunk_id, heading, body, tokens, hash, terms) VALUES `)
			args := make([]any, 0, 9*len(part))
			for i, c := range part {
				if i > 0 {
					q.WriteString(", ")
				}
				q.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?)")
				heading, _ := json.Marshal(c.HeadingPath)
				args = append(args, doc.Cat, doc.ID, c.Index, c.ID, string(heading), c.Text, c.Tokens, c.Hash,
					strings.Join(chat.Tokens(knowledge.IndexText(c)), " "))
			}
			if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, internal(err)
	}
	return created, nil
}

const docColumns = `cat, id, title, url, origin, format, bytes, chunks, created_at`

func scanDoc(row interface{ Scan(...any) error }) (knowledge.Document, error) {
	var d knowledge.Document
	var at int64
	err := row.Scan(&d.Cat, &d.ID, &d.Title, &d.URL, &d.Origin, &d.Format, &d.Bytes, &d.ChunkCount, &at)
	d.CreatedAt = time.Unix(0, at).UTC()
	return d, err
}

// Documents implements ports.DocumentStore.
func (s *Store) Documents(ctx context.Context, cat string) ([]knowledge.Document, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+docColumns+` FROM doc_documents WHERE cat = ? ORDER BY created_at, id`, cat)
	if err != nil {
		return nil, internal(err)
	}
	defer func() { _ = rows.Close() }()
	var out []knowledge.Document
	for rows.Next() {
		d, err := scanDoc(rows)
		if err != nil {
			return nil, internal(err)
		}
		out = append(out, d)
	}
	return out, internal(rows.Err())
}

// Document implements ports.DocumentStore.
func (s *Store) Document(ctx context.Context, cat, id string) (knowledge.Document, error) {
	d, err := scanDoc(s.db.QueryRowContext(ctx, `SELECT `+docColumns+` FROM doc_documents WHERE cat = ? AND id = ?`, cat, id))
	if errors.Is(err, sql.ErrNoRows) {
		return knowledge.Document{}, notFound(id)
	}
	if err != nil {
		return knowledge.Document{}, internal(err)
	}
	ps, err := s.passages(ctx, `WHERE c.cat = ? AND c.doc_id = ? ORDER BY c.idx`, cat, id)
	if err != nil {
		return knowledge.Document{}, err
	}
	for _, p := range ps {
		d.Chunks = append(d.Chunks, p.Chunk)
	}
	return d, nil
}

// DeleteDocument implements ports.DocumentStore.
func (s *Store) DeleteDocument(ctx context.Context, cat, id string) error {
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM doc_documents WHERE cat = ? AND id = ?`, cat, id)
		if err != nil {
			return internal(err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return internal(err)
		} else if n == 0 {
			return notFound(id)
		}
		var hashes []string
		if err := tx.NewRaw(`SELECT DISTINCT hash FROM doc_chunks WHERE cat = ? AND doc_id = ?`, cat, id).Scan(ctx, &hashes); err != nil {
			return internal(err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM doc_chunks WHERE cat = ? AND doc_id = ?`, cat, id); err != nil {
			return internal(err)
		}
		if len(hashes) == 0 {
			return nil
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM doc_embeddings WHERE hash IN (?)
			AND NOT EXISTS (SELECT 1 FROM doc_chunks c WHERE c.hash = doc_embeddings.hash)`, bun.List(hashes))
		return internal(err)
	})
}

// passages reads chunks with their documents' title and URL; where holds
// the conditions on c (doc_chunks) and the order.
func (s *Store) passages(ctx context.Context, where string, args ...any) ([]knowledge.Passage, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT c.doc_id, d.title, d.url, c.chunk_id, c.idx, c.heading, c.body, c.tokens, c.hash
		FROM doc_chunks c JOIN doc_documents d ON d.cat = c.cat AND d.id = c.doc_id `+where, args...)
	if err != nil {
		return nil, internal(err)
	}
	defer func() { _ = rows.Close() }()
	var out []knowledge.Passage
	for rows.Next() {
		var p knowledge.Passage
		var heading string
		c := &p.Chunk
		if err := rows.Scan(&p.DocID, &p.DocTitle, &p.DocURL, &c.ID, &c.Index, &heading, &c.Text, &c.Tokens, &c.Hash); err != nil {
			return nil, internal(err)
		}
		if err := json.Unmarshal([]byte(heading), &c.HeadingPath); err != nil {
			return nil, internal(err)
		}
		out = append(out, p)
	}
	return out, internal(rows.Err())
}

// words are the search words of terms: their chat.Tokens, distinct, so
// only letters, digits and marks reach the index's query syntax.
func words(terms []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range terms {
		for _, w := range chat.Tokens(t) {
			if !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	return out
}

// SearchChunks implements ports.DocumentStore: any of the words, ranked by
// FTS5's bm25 on SQLite and ts_rank on PostgreSQL.
func (s *Store) SearchChunks(ctx context.Context, cat string, terms []string, limit int) ([]knowledge.Passage, error) {
	ws := words(terms)
	if len(ws) == 0 || limit <= 0 {
		return nil, nil
	}
	if s.postgres {
		q := make([]string, len(ws))
		for i, w := range ws {
			q[i] = "'" + w + "'"
		}
		tsq := strings.Join(q, " | ")
		return s.passages(ctx, `WHERE c.cat = ? AND c.search @@ to_tsquery('simple', ?)
			ORDER BY ts_rank(c.search, to_tsquery('simple', ?)) DESC, c.seq LIMIT ?`, cat, tsq, tsq, limit)
	}
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = `"` + w + `"`
	}
	return s.passages(ctx, `JOIN (SELECT rowid AS seq, bm25(doc_fts) AS rank FROM doc_fts WHERE doc_fts MATCH ?) f ON f.seq = c.seq
		WHERE c.cat = ? ORDER BY f.rank, c.seq LIMIT ?`, strings.Join(q, " OR "), cat, limit)
}

// Passages implements ports.DocumentStore.
func (s *Store) Passages(ctx context.Context, cat string, chunkIDs []string) ([]knowledge.Passage, error) {
	if len(chunkIDs) == 0 {
		return nil, nil
	}
	ps, err := s.passages(ctx, `WHERE c.cat = ? AND c.chunk_id IN (?)`, cat, bun.List(chunkIDs))
	if err != nil {
		return nil, err
	}
	byID := make(map[string]knowledge.Passage, len(ps))
	for _, p := range ps {
		byID[p.Chunk.ID] = p
	}
	out := make([]knowledge.Passage, 0, len(ps))
	for _, id := range chunkIDs {
		if p, ok := byID[id]; ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// AllPassages implements ports.DocumentStore.
func (s *Store) AllPassages(ctx context.Context, cat string) ([]knowledge.Passage, error) {
	return s.passages(ctx, `WHERE c.cat = ? ORDER BY d.created_at, d.id, c.idx`, cat)
}

// PutEmbeddings implements ports.DocumentStore.
func (s *Store) PutEmbeddings(ctx context.Context, model string, vectors map[string][]float32) error {
	if len(vectors) == 0 {
		return nil
	}
	var q strings.Builder
	q.WriteString(`INSERT INTO doc_embeddings (hash, model, vec) VALUES `)
	args := make([]any, 0, 3*len(vectors))
	for h, v := range vectors {
		if len(args) > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?, ?)")
		args = append(args, h, model, encode(v))
	}
	q.WriteString(` ON CONFLICT (hash, model) DO NOTHING`)
	_, err := s.db.ExecContext(ctx, q.String(), args...)
	return internal(err)
}

// Embeddings implements ports.DocumentStore.
func (s *Store) Embeddings(ctx context.Context, model string, hashes []string) (map[string][]float32, error) {
	out := map[string][]float32{}
	for start := 0; start < len(hashes); start += 1000 {
		part := hashes[start:min(len(hashes), start+1000)]
		if err := s.embeddings(ctx, model, part, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// embeddings reads the model's vectors of the hashes into out.
func (s *Store) embeddings(ctx context.Context, model string, hashes []string, out map[string][]float32) error {
	rows, err := s.db.QueryContext(ctx, `SELECT hash, vec FROM doc_embeddings WHERE model = ? AND hash IN (?)`, model, bun.List(hashes))
	if err != nil {
		return internal(err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var h string
		var b []byte
		if err := rows.Scan(&h, &b); err != nil {
			return internal(err)
		}
		out[h] = decode(b)
	}
	return internal(rows.Err())
}

func encode(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decode(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
