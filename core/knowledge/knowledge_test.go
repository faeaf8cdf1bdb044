package knowledge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/quick"
)

const manual = "# Widget Guide\n\nIntro paragraph about widgets.\n\n## Install\n\nRun the installer.\n\n- step one\n- step two\n  continued\n- step three\n\n```sh\nmake install\n\n# not a heading\n```\n\n### Linux\n\nUse apt.\n\n## Reset\n\nHold the button.\n"

func TestParseMarkdownStructure(t *testing.T) {
	p, err := Parse(FormatMarkdown, []byte(manual))
	if err != nil {
		t.Fatal(err)
	}
	if p.Title != "Widget Guide" {
		t.Errorf("title %q", p.Title)
	}
	type want struct {
		kind, path, text string
	}
	var got []want
	for _, b := range p.Blocks {
		got = append(got, want{b.Kind, strings.Join(b.HeadingPath, " > "), b.Text})
	}
	exp := []want{
		{BlockParagraph, "Widget Guide", "Intro paragraph about widgets."},
		{BlockParagraph, "Widget Guide > Install", "Run the installer."},
		{BlockList, "Widget Guide > Install", "- step one\n- step two\n  continued\n- step three"},
		{BlockCode, "Widget Guide > Install", "```sh\nmake install\n\n# not a heading\n```"},
		{BlockParagraph, "Widget Guide > Install > Linux", "Use apt."},
		{BlockParagraph, "Widget Guide > Reset", "Hold the button."},
	}
	if !slices.Equal(got, exp) {
		t.Errorf("blocks:\n got %q\nwant %q", got, exp)
	}
	if n := len(p.Blocks[2].Items); n != 3 {
		t.Errorf("list items %d, want 3", n)
	}
}

func TestParseHTML(t *testing.T) {
	doc := `<html><head><title>Guide</title><style>p{}</style></head><body>
	<h1>Widget</h1><p>Hello <b>bold</b> world.</p><script>alert(1)</script>
	<h2>Parts</h2><ul><li>gear</li><li>spring</li></ul><pre>a
  b</pre><table><tr><td>x</td><td>1</td></tr></table><div>tail text</div></body></html>`
	p, err := Parse(FormatHTML, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if p.Title != "Guide" {
		t.Errorf("title %q", p.Title)
	}
	var got []string
	for _, b := range p.Blocks {
		got = append(got, b.Kind+"|"+strings.Join(b.HeadingPath, ">")+"|"+b.Text)
	}
	exp := []string{
		"paragraph|Widget|Hello bold world.",
		"list|Widget>Parts|- gear\n- spring",
		"code|Widget>Parts|a\n  b",
		"list|Widget>Parts|x 1",
		"paragraph|Widget>Parts|tail text",
	}
	if !slices.Equal(got, exp) {
		t.Errorf("blocks:\n got %q\nwant %q", got, exp)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, c := range []struct{ format, text string }{{FormatText, "a\xffb"}, {FormatText, "a\x00b"}, {"pdf", "x"}} {
		if _, err := Parse(c.format, []byte(c.text)); err == nil {
			t.Errorf("Parse(%q, %q) accepted", c.format, c.text)
		}
	}
}

func TestFormatOf(t *testing.T) {
	for _, c := range []struct{ name, ct, want string }{
		{"a.md", "", FormatMarkdown}, {"a.HTML", "", FormatHTML}, {"a.txt", "", FormatText},
		{"blob", "text/markdown; charset=utf-8", FormatMarkdown}, {"blob", "text/plain", FormatText}, {"a.pdf", "application/pdf", ""},
	} {
		if got := FormatOf(c.name, c.ct); got != c.want {
			t.Errorf("FormatOf(%q, %q) = %q, want %q", c.name, c.ct, got, c.want)
		}
	}
}

func TestContentID(t *testing.T) {
	a, b := ContentID([]byte("same")), ContentID([]byte("same"))
	if a != b || len(a) != 32 || a == ContentID([]byte("other")) {
		t.Errorf("ids %q %q", a, b)
	}
}

// prose makes a document of n sentences of random words from a small
// vocabulary, in paragraphs under a few headings.
func prose(r *rand.Rand, n int) string {
	vocab := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango")
	var b strings.Builder
	for i := range n {
		if i%40 == 0 {
			fmt.Fprintf(&b, "\n## Section %d\n\n", i/40)
		} else if i%7 == 0 {
			b.WriteString("\n\n")
		}
		for j := range 5 + r.IntN(15) {
			if j > 0 {
				b.WriteString(" ")
			}
			b.WriteString(vocab[r.IntN(len(vocab))])
		}
		b.WriteString(". ")
	}
	return b.String()
}

// Chunks stay within the budget (the count of joined pieces may exceed
// the sum by a token per join), carry their section's path, cover every
// word of the document in order, and are the same for the same input.
func TestChunkProperties(t *testing.T) {
	f := func(seed uint64, sizeSeed uint16, sentences uint8) bool {
		r := rand.New(rand.NewPCG(seed, 1))
		size := MinChunkTokens + int(sizeSeed)%500
		text := prose(r, 1+int(sentences))
		p, err := Parse(FormatMarkdown, []byte(text))
		if err != nil {
			t.Log(err)
			return false
		}
		c := Chunker{Size: size}
		chunks := c.Chunk("doc", p)
		for i, ch := range chunks {
			if ch.Tokens > size+size/20+2 || ch.Index != i || ch.ID != ChunkID("doc", i) || ch.Hash != Hash(ch.Text) || ch.Tokens != Tokens.Count(ch.Text) {
				t.Logf("chunk %d: %d tokens (budget %d) %+v", i, ch.Tokens, size, ch)
				return false
			}
			if len(ch.HeadingPath) != 1 || !strings.HasPrefix(ch.HeadingPath[0], "Section ") {
				t.Logf("chunk %d path %q", i, ch.HeadingPath)
				return false
			}
		}
		// Every block's words appear, in order, in the chunks.
		var want, got []string
		for _, b := range p.Blocks {
			want = append(want, strings.Fields(b.Text)...)
		}
		for i, ch := range chunks {
			w := strings.Fields(ch.Text)
			if i > 0 && slices.Equal(ch.HeadingPath, chunks[i-1].HeadingPath) {
				prev := strings.Fields(chunks[i-1].Text)
				// Drop the overlap: the longest prefix that ends the previous chunk.
				for k := min(len(w), len(prev)); k > 0; k-- {
					if slices.Equal(w[:k], prev[len(prev)-k:]) {
						w = w[k:]
						break
					}
				}
			}
			got = append(got, w...)
		}
		if !slices.Equal(got, want) {
			t.Logf("words differ: %d chunks, got %d words, want %d", len(chunks), len(got), len(want))
			return false
		}
		return slices.EqualFunc(chunks, c.Chunk("doc", p), func(a, b Chunk) bool { return a.Hash == b.Hash && a.ID == b.ID })
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 25}); err != nil {
		t.Error(err)
	}
}

// A chunk continuing its section repeats 10-15% of the budget from the
// end of the chunk before.
func TestChunkOverlap(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	var b strings.Builder
	b.WriteString("# Only\n\n")
	for range 400 {
		b.WriteString(prose(r, 1)[len("\n## Section 0\n\n"):])
	}
	p, _ := Parse(FormatMarkdown, []byte(b.String()))
	for _, size := range []int{200, 500, 1000} {
		chunks := Chunker{Size: size}.Chunk("d", p)
		if len(chunks) < 3 {
			t.Fatalf("size %d: %d chunks", size, len(chunks))
		}
		for i := 1; i < len(chunks); i++ {
			prev, cur := chunks[i-1].Text, chunks[i].Text
			best := ""
			for k := 1; k <= len(cur) && k <= len(prev); k++ {
				if strings.HasSuffix(prev, cur[:k]) && (k == len(cur) || cur[k] == ' ') {
					best = cur[:k]
				}
			}
			n := Tokens.Count(best)
			if n < size/10 || n > size*15/100 {
				t.Errorf("size %d chunk %d: overlap %d tokens %q", size, i, n, best)
			}
		}
	}
}

// Oversized blocks split between items, lines or sentences, then words,
// then characters, and never lose text.
func TestChunkSplitsOversizedBlocks(t *testing.T) {
	long := strings.Repeat("x", 3000)
	code := "```\n" + strings.Repeat("fmt.Println(\"hello world\")\n", 60) + "```"
	list := strings.Repeat("- an item with several words in it\n", 60)
	p, _ := Parse(FormatMarkdown, []byte("# T\n\n"+long+"\n\n"+code+"\n\n"+list))
	chunks := Chunker{Size: 100}.Chunk("d", p)
	var all strings.Builder
	for _, c := range chunks {
		if c.Tokens > 105 {
			t.Errorf("chunk %d has %d tokens", c.Index, c.Tokens)
		}
		all.WriteString(c.Text)
	}
	if got := strings.Count(all.String(), "x"); got < 3000 {
		t.Errorf("lost characters: %d x", got)
	}
	if got := strings.Count(all.String(), "Println"); got < 60 {
		t.Errorf("lost code lines: %d", got)
	}
	// A small code block stays whole in one chunk.
	p, _ = Parse(FormatMarkdown, []byte("# T\n\n```\na\n\nb\n```\n"))
	if c := (Chunker{Size: 100}).Chunk("d", p); len(c) != 1 || c[0].Text != "```\na\n\nb\n```" {
		t.Errorf("code block split: %+v", c)
	}
}

func TestFuse(t *testing.T) {
	got := Fuse([]string{"a", "b", "c"}, []string{"c", "a", "d"})
	ids := make([]string, len(got))
	for i, f := range got {
		ids[i] = f.ID
	}
	if !slices.Equal(ids, []string{"a", "c", "b", "d"}) {
		t.Errorf("order %v", ids)
	}
	if want := 1.0/61 + 1.0/62; math.Abs(got[0].Score-want) > 1e-15 {
		t.Errorf("score %v, want %v", got[0].Score, want)
	}
}

// Fusing is symmetric in its lists' content: an id in both lists at
// ranks i and j outscores one in a single list at a rank worse than both.
func TestFuseProperties(t *testing.T) {
	f := func(a, b []uint8) bool {
		la, lb := ids(a), ids(b)
		fused := Fuse(la, lb)
		rank := map[string]int{}
		for i, x := range fused {
			rank[x.ID] = i
			if i > 0 && fused[i-1].Score < x.Score {
				return false
			}
		}
		for _, x := range la {
			if _, ok := rank[x]; !ok {
				return false
			}
		}
		// Top of both lists is the top of the fusion.
		if len(la) > 0 && len(lb) > 0 && la[0] == lb[0] && fused[0].ID != la[0] {
			return false
		}
		return len(fused) == len(union(la, lb))
	}
	if err := quick.Check(f, nil); err != nil {
		t.Error(err)
	}
}

func ids(b []uint8) []string {
	var out []string
	for _, x := range b {
		out = append(out, fmt.Sprint(x%20))
	}
	return out
}

func union(a, b []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range append(slices.Clone(a), b...) {
		m[x] = true
	}
	return m
}

func TestQueryTermsAndCoverage(t *testing.T) {
	terms := QueryTerms("How do I reset my Password?")
	if !slices.Equal(terms, []string{"reset", "password"}) {
		t.Errorf("terms %q", terms)
	}
	if got := QueryTerms("how do I"); !slices.Equal(got, []string{"how", "do", "i"}) {
		t.Errorf("all stop words: %q", got)
	}
	if c := Coverage(terms, "To reset the device, hold the button."); c != 0.5 {
		t.Errorf("coverage %v", c)
	}
}

func TestCheckCitations(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
		cite []int
	}{
		{"Hold it [1]. Then wait [3].", 2, "Hold it [1]. Then wait.", []int{1}},
		{"See [2, 9] and [1][2].", 2, "See [2] and [1][2].", []int{2, 1}},
		{"A [link](http://x) and [0].", 1, "A [link](http://x) and.", nil},
		{"[1](x) stays", 0, "[1](x) stays", nil},
	} {
		got, cited := CheckCitations(c.in, c.n)
		if got != c.want || !slices.Equal(cited, c.cite) {
			t.Errorf("CheckCitations(%q, %d) = %q %v, want %q %v", c.in, c.n, got, cited, c.want, c.cite)
		}
	}
}

// After the check every marker names a supplied source, and checking
// again changes nothing.
func TestCheckCitationsProperties(t *testing.T) {
	f := func(parts []uint8, n uint8) bool {
		var b strings.Builder
		for _, p := range parts {
			if p%3 == 0 {
				fmt.Fprintf(&b, " [%d]", p%12)
			} else {
				b.WriteString(" word")
			}
		}
		out, cited := CheckCitations(b.String(), int(n%6))
		for _, m := range citation.FindAllStringSubmatch(out, -1) {
			for f := range strings.SplitSeq(m[1], ",") {
				var k int
				fmt.Sscan(strings.TrimSpace(f), &k)
				if k < 1 || k > int(n%6) || !slices.Contains(cited, k) {
					return false
				}
			}
		}
		again, _ := CheckCitations(out, int(n%6))
		return again == out
	}
	if err := quick.Check(f, nil); err != nil {
		t.Error(err)
	}
}

func TestTopKMatchesSort(t *testing.T) {
	f := func(seed uint64, n uint8, k uint8) bool {
		r := rand.New(rand.NewPCG(seed, 2))
		vecs := make([][]float32, int(n))
		for i := range vecs {
			vecs[i] = Normalize([]float32{float32(r.IntN(5)), float32(r.IntN(5)), float32(r.IntN(5))})
		}
		q := Normalize([]float32{1, 2, 3})
		got := TopK(q, vecs, int(k%10))
		all := make([]Scored, len(vecs))
		for i, v := range vecs {
			all[i] = Scored{i, float64(Dot(q, v))}
		}
		slices.SortStableFunc(all, func(a, b Scored) int {
			if a.Score > b.Score {
				return -1
			} else if a.Score < b.Score {
				return 1
			}
			return 0
		})
		want := all[:min(len(all), int(k%10))]
		return slices.Equal(got, want) || (len(got) == 0 && len(want) == 0)
	}
	if err := quick.Check(f, nil); err != nil {
		t.Error(err)
	}
}

func TestExcerpt(t *testing.T) {
	text := "## Reset\n\nUnplug the widget. Hold the reset button for ten seconds. The light blinks.\n```\ncode\n```"
	if got := Excerpt(text, []string{"reset", "button"}, 60); got != "Hold the reset button for ten seconds. The light blinks." {
		t.Errorf("excerpt %q", got)
	}
	if got := Excerpt(text, nil, 20); got != "Unplug the widget." {
		t.Errorf("no terms: %q", got)
	}
}
