package chatsql

import (
	"context"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/core/chat"
)

// SearchConversations finds the owner's conversations containing every
// term of the query in their name and messages together, through the
// full-text index, best first (FTS5 bm25 with the name weighted double on
// SQLite, ts_rank with the name in weight class A on PostgreSQL; ties
// newest first). The query reaches the index only as the words
// chat.SearchTerms found, each quoted, so no input is read as index
// syntax. The snippet is cut by chat.Snippet from the text (name or one
// message) holding the most distinct terms.
func (s *Store) SearchConversations(ctx context.Context, owner chat.Owner, query string, limit int) ([]chat.SearchHit, error) {
	terms, err := chat.SearchTerms(query)
	if err != nil {
		return nil, err
	}
	if limit, err = chat.Limited(limit); err != nil {
		return nil, err
	}
	q := `SELECT c.seq, c.id, c.cat, c.user_id, c.name, c.created_at, c.updated_at, -bm25(chat_fts, 2.0, 1.0) AS score
		FROM chat_fts JOIN chat_conversations c ON c.seq = chat_fts.rowid
		WHERE chat_fts MATCH ? AND c.cat = ? AND c.user_id = ?
		ORDER BY score DESC, c.updated_at DESC, c.id DESC LIMIT ?`
	args := []any{ftsMatch(terms), owner.Cat, owner.UserID, limit}
	if s.postgres {
		q, args = searchQueryPostgres(len(terms)), searchArgsPostgres(terms, owner.Cat, owner.UserID, limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, internal(err)
	}
	defer func() { _ = rows.Close() }()
	var (
		hits []chat.SearchHit
		seqs []int64
	)
	for rows.Next() {
		var (
			hit              chat.SearchHit
			seq              int64
			created, updated int64
		)
		c := &hit.Conversation
		if err := rows.Scan(&seq, &c.ID, &c.Owner.Cat, &c.Owner.UserID, &c.Name, &created, &updated, &hit.Score); err != nil {
			return nil, internal(err)
		}
		c.CreatedAt, c.UpdatedAt = fromNanos(created), fromNanos(updated)
		hits, seqs = append(hits, hit), append(seqs, seq)
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err)
	}
	if len(hits) == 0 {
		return nil, nil
	}
	texts, err := s.messageTexts(ctx, seqs)
	if err != nil {
		return nil, err
	}
	for i := range hits {
		hits[i].Snippet = snippet(hits[i].Conversation.Name, texts[seqs[i]], terms)
	}
	return hits, nil
}

// ftsMatch is an FTS5 query requiring every term: each a quoted string
// (quotes doubled), so operators, NEAR, * or column filters in the user's
// text stay plain words.
func ftsMatch(terms []string) string {
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(quoted, " ")
}

// messageTexts returns the searched text of the conversations' messages
// (chat.SearchText: the content and the tools' names), by seq, in order.
func (s *Store) messageTexts(ctx context.Context, seqs []int64) (map[int64][]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT conversation_seq, content, role, tool FROM chat_messages
		WHERE conversation_seq IN (?) ORDER BY conversation_seq, pos`, bun.List(seqs))
	if err != nil {
		return nil, internal(err)
	}
	defer func() { _ = rows.Close() }()
	out := map[int64][]string{}
	for rows.Next() {
		var (
			seq                 int64
			content, role, tool string
		)
		if err := rows.Scan(&seq, &content, &role, &tool); err != nil {
			return nil, internal(err)
		}
		m := chat.Message{Role: role, Content: content}
		decodeTool(tool, &m)
		out[seq] = append(out[seq], chat.SearchText(m))
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err)
	}
	return out, nil
}

// snippet picks the text with the most distinct terms as words (the name
// first on ties) and cuts a snippet of it around the match.
func snippet(name string, messages, terms []string) string {
	best, bestDistinct := name, -1
	for _, text := range append([]string{name}, messages...) {
		words := chat.Tokens(text)
		distinct := 0
		for _, t := range terms {
			if slices.Contains(words, t) {
				distinct++
			}
		}
		if distinct > bestDistinct {
			best, bestDistinct = text, distinct
		}
	}
	return chat.Snippet(best, terms)
}
