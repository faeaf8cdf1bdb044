// Package docsql keeps CATs' documents, their chunks and the embeddings
// cache in the database of a sqlstore.Store, in tables of its own
// migrated under the component name "documents".
//
// Keyword search runs on the database's own full-text index, updated in
// the statement that writes a chunk and never rebuilt: a contentless FTS5
// table on SQLite (kept in step by triggers), a generated tsvector column
// with a GIN index on PostgreSQL ('simple' configuration), each holding
// the chunks' words prefixed by their CAT. Both
// index the words chat.Tokens finds in a chunk's heading path and text,
// and a query reaches them only as such words, so no input is read as
// index syntax. A search reads at most perWord chunks per word from the
// index and ranks those only.
// Embeddings are float32 vectors (little-endian bytes) keyed by (content
// hash, model).
package docsql

import (
	"context"
	"crypto/md5" //nolint:gosec // an index prefix of CAT names, the same as PostgreSQL's md5(), not a secret
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strconv"
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
	{Version: 2, Name: "keyword index words scoped by CAT", Statements: catWords},
}

// catWords indexes the chunks' words prefixed by their CAT (see
// Store.catWord), so a search reads and scores only the CAT's postings,
// whatever the planner knows of the tables: on SQLite a contentless FTS5
// table replaces the first one (its rows deleted by rowid), on PostgreSQL
// a generated tsvector column with its GIN index replaces the first,
// without GIN's pending list (fastupdate), which every search would scan
// until a vacuum merged it.
func catWords(dialect string) []string {
	if dialect == sqlstore.DialectPostgres {
		p := `'k' || md5(cat) || 'x'`
		return []string{
			`ALTER TABLE doc_chunks DROP COLUMN search`,
			`ALTER TABLE doc_chunks ADD COLUMN words tsvector GENERATED ALWAYS AS
				(to_tsvector('simple', ` + p + ` || replace(terms, ' ', ' ' || ` + p + `))) STORED`,
			`CREATE INDEX doc_chunks_words ON doc_chunks USING GIN (words) WITH (fastupdate = off)`,
		}
	}
	prefixed := func(row string) string {
		p := `'k' || lower(hex(` + row + `.cat)) || 'x'`
		return p + ` || replace(` + row + `.terms, ' ', ' ' || ` + p + `)`
	}
	return []string{
		`DROP TRIGGER doc_fts_insert`,
		`DROP TRIGGER doc_fts_delete`,
		`DROP TABLE doc_fts`,
		`CREATE VIRTUAL TABLE doc_words USING fts5(terms, content='', contentless_delete=1,
			tokenize="unicode61 remove_diacritics 0 categories 'L* N* Co M*'")`,
		`INSERT INTO doc_words (rowid, terms) SELECT seq, ` + prefixed("doc_chunks") + ` FROM doc_chunks`,
		`CREATE TRIGGER doc_words_insert AFTER INSERT ON doc_chunks BEGIN
			INSERT INTO doc_words (rowid, terms) VALUES (new.seq, ` + prefixed("new") + `);
		END`,
		`CREATE TRIGGER doc_words_delete AFTER DELETE ON doc_chunks BEGIN
			DELETE FROM doc_words WHERE rowid = old.seq;
		END`,
	}
}

// catWord is a word of the CAT as the index holds it: "k", the CAT
// name's UTF-8 bytes in hex (SQLite) or its MD5 in hex (PostgreSQL, where
// a generated column may only call immutable functions), "x", the word.
// Hex digits and the word's letters, digits and marks make one token, and
// no two (CAT, word) pairs make the same one (on PostgreSQL, short of an
// MD5 collision between two CAT names).
func (s *Store) catWord(cat, word string) string {
	if s.postgres {
		sum := md5.Sum([]byte(cat)) //nolint:gosec // as PostgreSQL's md5(cat) in the index, not a secret
		return "k" + hex.EncodeToString(sum[:]) + "x" + word
	}
	return "k" + hex.EncodeToString([]byte(cat)) + "x" + word
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

// perWord bounds the chunks a search reads and scores for each of its
// words: every chunk holding a word rarer than that counts it in full,
// and a word more common than that (whose weight in the ranking is small)
// is counted in the first perWord chunks found.
const perWord = 1000

// SearchChunks implements ports.DocumentStore: any of the words, ranked
// by the sum over the words of FTS5's bm25 on SQLite, and by ts_rank on
// PostgreSQL, over a candidate set of at most perWord chunks per word, so
// a search costs the same however many chunks hold its common words.
func (s *Store) SearchChunks(ctx context.Context, cat string, terms []string, limit int) ([]knowledge.Passage, error) {
	ws := words(terms)
	if len(ws) == 0 || limit <= 0 {
		return nil, nil
	}
	if s.postgres {
		return s.searchPostgres(ctx, cat, ws, limit)
	}
	// FTS5's bm25 of a row is the sum of its phrases' terms, each from
	// the phrase's own frequency: scored one word at a time, the sum is
	// the score of the OR query for every chunk each word was read in.
	parts := make([]string, len(ws))
	args := make([]any, 0, len(ws)+2)
	for i, w := range ws {
		parts[i] = `SELECT * FROM (SELECT rowid AS seq, bm25(doc_words) AS r FROM doc_words WHERE doc_words MATCH ? LIMIT ` + strconv.Itoa(perWord) + `)`
		args = append(args, `"`+s.catWord(cat, w)+`"`)
	}
	args = append(args, limit, cat)
	return s.passages(ctx, `JOIN (SELECT seq, sum(r) AS rank FROM (`+strings.Join(parts, ` UNION ALL `)+`)
			GROUP BY seq ORDER BY rank, seq LIMIT ?) f ON f.seq = c.seq
		WHERE c.cat = ? ORDER BY f.rank, c.seq`, args...)
}

// searchPostgres ranks by ts_rank over the OR query the chunks of the
// CAT found, through the GIN index, for each word (at most perWord each).
func (s *Store) searchPostgres(ctx context.Context, cat string, ws []string, limit int) ([]knowledge.Passage, error) {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = "'" + s.catWord(cat, w) + "'"
	}
	args := []any{strings.Join(q, " | ")}
	parts := make([]string, len(ws))
	for i := range ws {
		parts[i] = `(SELECT seq FROM doc_chunks WHERE words @@ to_tsquery('simple', ?) LIMIT ` + strconv.Itoa(perWord) + `)`
		args = append(args, q[i])
	}
	args = append(args, limit, cat)
	return s.passages(ctx, `JOIN (SELECT k.seq, ts_rank(k.words, to_tsquery('simple', ?)) AS rank
			FROM doc_chunks k WHERE k.seq IN (`+strings.Join(parts, ` UNION `)+`)
			ORDER BY rank DESC, k.seq LIMIT ?) f ON f.seq = c.seq
		WHERE c.cat = ? ORDER BY f.rank DESC, c.seq`, args...)
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
