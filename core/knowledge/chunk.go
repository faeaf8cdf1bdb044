package knowledge

import (
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/tiktoken-go/tokenizer"
)

// Chunking defaults and bounds (cat.knowledge.chunk_tokens).
const (
	DefaultChunkTokens = 500
	MinChunkTokens     = 50
	MaxChunkTokens     = 8000
)

// Counter counts the tokens of text.
type Counter interface{ Count(text string) int }

var (
	bpeOnce sync.Once
	bpe     tokenizer.Codec
)

// cl100k counts tokens with OpenAI's cl100k_base encoding, which ships
// with the tokenizer package (nothing is downloaded).
type cl100k struct{}

func (cl100k) Count(text string) int {
	bpeOnce.Do(func() {
		var err error
		if bpe, err = tokenizer.Get(tokenizer.Cl100kBase); err != nil {
			panic("knowledge: cl100k_base tokenizer: " + err.Error()) // embedded data: cannot fail
		}
	})
	n, err := bpe.Count(text)
	if err != nil {
		// Invalid UTF-8 never reaches here (Parse refuses it); count
		// bytes as a safe over-estimate anyway.
		return len(text)
	}
	return n
}

// Tokens is the default counter: cl100k_base.
var Tokens Counter = cl100k{}

// Chunker splits parsed documents into chunks of about Size tokens.
type Chunker struct {
	// Size is the token budget of a chunk (DefaultChunkTokens when 0).
	Size int
	// Counter counts tokens (Tokens when nil).
	Counter Counter
}

// Overlap is the tokens a chunk repeats from the end of the one before it
// in the same section: an eighth of the budget (12.5%), so a passage cut
// at a chunk's end is still whole in the next.
func Overlap(size int) int { return (size + 7) / 8 }

// piece is a part of a block of at most the budget.
type piece struct {
	path   []string
	text   string
	tokens int
	// block numbers the block it came from; sep joins it to the piece
	// before it from the same block.
	block int
	sep   string
}

// Chunk splits a document into chunks. Blocks (paragraphs, whole lists,
// whole code blocks) are kept whole where they fit the budget and packed
// together within a section; a chunk never spans two sections (its
// HeadingPath is exact). A block larger than the budget is split between
// list items, code lines or sentences, then words, then characters. A
// chunk that continues a section begins with the last Overlap(Size)
// tokens' worth of words of the one before.
func (c Chunker) Chunk(docID string, p Parsed) []Chunk {
	size := c.Size
	if size <= 0 {
		size = DefaultChunkTokens
	}
	count := c.Counter
	if count == nil {
		count = Tokens
	}
	var pieces []piece
	for i, b := range p.Blocks {
		pieces = append(pieces, c.split(b, i, size, count)...)
	}
	var out []Chunk
	var cur strings.Builder
	var curPath []string
	curTokens, lastBlock := 0, -1
	emit := func() {
		if t := strings.TrimSpace(cur.String()); t != "" {
			out = append(out, Chunk{ID: ChunkID(docID, len(out)), Index: len(out), HeadingPath: curPath, Text: t, Tokens: count.Count(t), Hash: Hash(t)})
		}
		cur.Reset()
		curTokens = 0
	}
	for _, pc := range pieces {
		sep := "\n\n"
		if pc.block == lastBlock {
			sep = pc.sep
		}
		if cur.Len() > 0 && !slices.Equal(pc.path, curPath) {
			emit()
		} else if cur.Len() > 0 && curTokens+1+pc.tokens > size {
			tail := c.tail(cur.String(), Overlap(size), count)
			emit()
			if tt := count.Count(tail); tail != "" && tt+1+pc.tokens <= size {
				cur.WriteString(tail)
				curTokens = tt
			}
		}
		if cur.Len() > 0 {
			cur.WriteString(sep)
			curTokens++
		}
		curPath = pc.path
		cur.WriteString(pc.text)
		curTokens += pc.tokens
		lastBlock = pc.block
	}
	emit()
	return out
}

// tail is the longest run of whole words ending text whose tokens stay
// within n.
func (Chunker) tail(text string, n int, count Counter) string {
	words := strings.Fields(text)
	total, i := 0, len(words)
	for i > 0 {
		w := count.Count(" " + words[i-1])
		if total+w > n {
			break
		}
		total += w
		i--
	}
	return strings.Join(words[i:], " ")
}

// split cuts a block into pieces within the budget.
func (c Chunker) split(b Block, block, size int, count Counter) []piece {
	mk := func(texts []string, sep string) []piece {
		var out []piece
		for _, t := range texts {
			out = append(out, piece{path: b.HeadingPath, text: t, tokens: count.Count(t), block: block, sep: sep})
		}
		return out
	}
	if n := count.Count(b.Text); n <= size {
		return []piece{{path: b.HeadingPath, text: b.Text, tokens: n, block: block}}
	}
	bySentence, byWord := splitter{sentences}, splitter{words}
	switch b.Kind {
	case BlockList:
		return mk(units(b.Items, size, count, bySentence, byWord), "\n")
	case BlockCode:
		return mk(units(strings.Split(b.Text, "\n"), size, count, byWord), "\n")
	}
	return mk(units(sentences(b.Text), size, count, byWord), " ")
}

// splitter cuts a unit into finer ones.
type splitter struct{ split func(string) []string }

// units cuts texts over the budget by the finer splitters in turn, and
// by runes at the last; texts within it stay whole (Chunk packs them).
func units(texts []string, size int, count Counter, finer ...splitter) []string {
	var out []string
	for _, u := range texts {
		switch {
		case count.Count(u) <= size:
			out = append(out, u)
		case len(finer) > 0:
			out = append(out, units(finer[0].split(u), size, count, finer[1:]...)...)
		default:
			out = append(out, runes(u, size, count)...)
		}
	}
	return out
}

func words(s string) []string { return strings.Fields(s) }

// sentences splits prose after '.', '!' or '?' followed by a space.
func sentences(s string) []string {
	var out []string
	start := 0
	rs := []rune(s)
	for i := 0; i < len(rs)-1; i++ {
		if (rs[i] == '.' || rs[i] == '!' || rs[i] == '?') && unicode.IsSpace(rs[i+1]) {
			if t := strings.TrimSpace(string(rs[start : i+1])); t != "" {
				out = append(out, t)
			}
			start = i + 1
		}
	}
	if t := strings.TrimSpace(string(rs[start:])); t != "" {
		out = append(out, t)
	}
	return out
}

// runes cuts text with no spaces into the longest rune prefixes within
// the budget (binary search on the prefix length).
func runes(s string, size int, count Counter) []string {
	var out []string
	for s != "" {
		rs := []rune(s)
		lo, hi := 1, len(rs)
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if count.Count(string(rs[:mid])) <= size {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		part := string(rs[:lo])
		out = append(out, part)
		s = s[len(part):]
	}
	return out
}
