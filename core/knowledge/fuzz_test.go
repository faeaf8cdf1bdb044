package knowledge

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse feeds any bytes to the document parsers and the chunker: no
// panic, and every chunk is non-empty UTF-8 within the budget.
func FuzzParse(f *testing.F) {
	f.Add(uint8(0), manual)
	f.Add(uint8(1), "plain\n\ntext")
	f.Add(uint8(2), "<h1>T</h1><p>a</p><ul><li>x</li></ul><pre>c</pre>")
	f.Fuzz(func(t *testing.T, kind uint8, text string) {
		format := []string{FormatMarkdown, FormatText, FormatHTML}[int(kind)%3]
		p, err := Parse(format, []byte(text))
		if err != nil {
			return
		}
		const size = 60
		for _, c := range (Chunker{Size: size}).Chunk("d", p) {
			if strings.TrimSpace(c.Text) == "" || !utf8.ValidString(c.Text) || c.Tokens > size+size/20+2 {
				t.Fatalf("bad chunk %+v", c)
			}
		}
	})
}
