package chat

import (
	"strings"
	"unicode/utf8"

	"github.com/catsrv/catsrv/core/errs"
)

// Search bounds: a query is a few words, not a document.
const (
	MaxQueryBytes = 256
	MaxQueryTerms = 16
	// SnippetRunes is about how long a snippet gets.
	SnippetRunes = 120
)

// SearchHit is one conversation a search found. Score orders hits, higher
// first; its scale is the store's own.
type SearchHit struct {
	Conversation Conversation
	Snippet      string
	Score        float64
}

// SearchTerms returns the words of a search query: every hit must contain
// all of them (as words, case-insensitive; stores may also match their
// stems). An empty or oversized query, or one that is not text (bytes
// that are not UTF-8, a NUL byte), is errs.KindInvalid.
func SearchTerms(q string) ([]string, error) {
	switch {
	case len(q) > MaxQueryBytes:
		return nil, errs.New(errs.KindInvalid, "q: longer than %d bytes", MaxQueryBytes)
	case !utf8.ValidString(q):
		return nil, errs.New(errs.KindInvalid, "q: not valid UTF-8")
	case strings.IndexByte(q, 0) >= 0:
		return nil, errs.New(errs.KindInvalid, "q: contains a NUL byte")
	}
	terms := Tokens(q)
	switch {
	case len(terms) == 0:
		return nil, errs.New(errs.KindInvalid, "q: must contain a word")
	case len(terms) > MaxQueryTerms:
		return nil, errs.New(errs.KindInvalid, "q: more than %d words", MaxQueryTerms)
	}
	return terms, nil
}

// Snippet cuts a window of about SnippetRunes runes of text around the
// first of the terms it contains, marking cuts with "…".
func Snippet(text string, terms []string) string {
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) <= SnippetRunes {
		return text
	}
	lower := strings.ToLower(text)
	at := -1
	for _, t := range terms {
		if i := strings.Index(lower, t); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	runes := []rune(text)
	start := 0
	if at > 0 && len(lower) == len(text) { // byte offsets agree only when lowering kept the length
		start = max(0, utf8.RuneCountInString(text[:at])-SnippetRunes/3)
	}
	end := min(len(runes), start+SnippetRunes)
	out := string(runes[start:end])
	if start > 0 {
		out = "…" + out
	}
	if end < len(runes) {
		out += "…"
	}
	return out
}
