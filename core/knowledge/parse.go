package knowledge

import (
	"bytes"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/catsrv/catsrv/core/errs"
)

// Block kinds: the units chunking keeps whole where they fit.
const (
	BlockParagraph = "paragraph"
	BlockList      = "list"
	BlockCode      = "code"
)

// Block is a structural unit of a document: a paragraph, a whole list or
// a whole code block, with the heading path it sits under.
type Block struct {
	Kind        string
	HeadingPath []string
	Text        string
	// Items are a list's items (Text joins them), so an oversized list
	// splits between items.
	Items []string
}

// Parsed is a document's text as blocks, and the title it gives itself
// (its first top-level heading, or an HTML <title>).
type Parsed struct {
	Title  string
	Blocks []Block
}

// FormatOf names the format of a file by its name's extension or its
// content type: Markdown, HTML or plain text; "" for anything else.
func FormatOf(name, contentType string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown", ".mdown":
		return FormatMarkdown
	case ".html", ".htm":
		return FormatHTML
	case ".txt", ".text":
		return FormatText
	}
	ct, _, _ := strings.Cut(strings.ToLower(contentType), ";")
	switch strings.TrimSpace(ct) {
	case "text/markdown", "text/x-markdown":
		return FormatMarkdown
	case "text/html", "application/xhtml+xml":
		return FormatHTML
	case "text/plain":
		return FormatText
	}
	return ""
}

// Parse reads a document of the given format into blocks. The content
// must be UTF-8 text (errs.KindInvalid otherwise, as for an unknown
// format).
func Parse(format string, content []byte) (Parsed, error) {
	if !utf8.Valid(content) || bytes.IndexByte(content, 0) >= 0 {
		return Parsed{}, errs.New(errs.KindInvalid, "file: not UTF-8 text")
	}
	text := strings.ReplaceAll(strings.ReplaceAll(string(content), "\r\n", "\n"), "\r", "\n")
	switch format {
	case FormatMarkdown:
		return parseMarkdown(text), nil
	case FormatText:
		return Parsed{Blocks: paragraphs(text, nil)}, nil
	case FormatHTML:
		return parseHTML(text)
	}
	return Parsed{}, errs.New(errs.KindInvalid, "file: format %q is not one of markdown, text, html", format)
}

// paragraphs splits text at blank lines.
func paragraphs(text string, headings []string) []Block {
	var out []Block
	for _, p := range splitBlank(text) {
		out = append(out, Block{Kind: BlockParagraph, HeadingPath: headings, Text: p})
	}
	return out
}

func splitBlank(text string) []string {
	var out []string
	var cur []string
	flush := func() {
		if p := strings.TrimSpace(strings.Join(cur, "\n")); p != "" {
			out = append(out, p)
		}
		cur = cur[:0]
	}
	for line := range strings.SplitSeq(text, "\n") {
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return out
}

var (
	mdHeading  = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$`)
	mdFence    = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	mdListItem = regexp.MustCompile(`^ {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)`)
)

// parseMarkdown reads the block structure of CommonMark that matters for
// chunking: ATX headings, fenced code, lists (an item and its indented
// continuation lines), and paragraphs; inline markup stays as written.
func parseMarkdown(text string) Parsed {
	var p Parsed
	var path []string
	levels := []int{}
	lines := strings.Split(text, "\n")
	var para []string
	var items []string
	flushPara := func() {
		if t := strings.TrimSpace(strings.Join(para, "\n")); t != "" {
			p.Blocks = append(p.Blocks, Block{Kind: BlockParagraph, HeadingPath: path, Text: t})
		}
		para = nil
	}
	flushList := func() {
		var kept []string
		for _, it := range items {
			if it = strings.TrimRight(it, " \t\n"); strings.TrimSpace(it) != "" {
				kept = append(kept, it)
			}
		}
		if len(kept) > 0 {
			p.Blocks = append(p.Blocks, Block{Kind: BlockList, HeadingPath: path, Text: strings.Join(kept, "\n"), Items: kept})
		}
		items = nil
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := mdFence.FindStringSubmatch(line); m != nil {
			flushPara()
			flushList()
			fence := m[1]
			code := []string{line}
			for i++; i < len(lines); i++ {
				code = append(code, lines[i])
				if strings.HasPrefix(strings.TrimLeft(lines[i], " "), fence[:3]) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(lines[i]), string(fence[0]))) == "" {
					break
				}
			}
			if t := strings.TrimRight(strings.Join(code, "\n"), " \t\n"); strings.TrimSpace(t) != "" {
				p.Blocks = append(p.Blocks, Block{Kind: BlockCode, HeadingPath: path, Text: t})
			}
			continue
		}
		if m := mdHeading.FindStringSubmatch(line); m != nil {
			flushPara()
			flushList()
			level, title := len(m[1]), strings.TrimSpace(m[2])
			for len(levels) > 0 && levels[len(levels)-1] >= level {
				levels, path = levels[:len(levels)-1], path[:len(path)-1]
			}
			if title == "" {
				continue
			}
			if p.Title == "" && level == 1 {
				p.Title = title
			}
			levels = append(levels, level)
			path = append(path[:len(path):len(path)], title)
			continue
		}
		if strings.TrimSpace(line) == "" {
			flushPara()
			// A blank line inside a list ends it unless the next line
			// goes on with an item or an indented continuation.
			if len(items) > 0 && (i+1 >= len(lines) || (!mdListItem.MatchString(lines[i+1]) && !indented(lines[i+1]))) {
				flushList()
			}
			continue
		}
		if mdListItem.MatchString(line) {
			flushPara()
			items = append(items, line)
			continue
		}
		if len(items) > 0 && (indented(line) || len(para) == 0) {
			items[len(items)-1] += "\n" + line
			continue
		}
		flushList()
		para = append(para, line)
	}
	flushPara()
	flushList()
	return p
}

func indented(line string) bool {
	return strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "\t")
}

// parseHTML reads headings (h1-h6), paragraphs, lists, preformatted code
// and tables from HTML; scripts, styles and the head (but its <title>)
// are left out, and other elements contribute their text.
func parseHTML(text string) (Parsed, error) {
	root, err := html.Parse(strings.NewReader(text))
	if err != nil {
		return Parsed{}, errs.Wrap(errs.KindInvalid, err, "file: not HTML")
	}
	w := htmlWalker{}
	w.walk(root)
	w.flush()
	if w.p.Title == "" {
		w.p.Title = w.firstH1
	}
	return w.p, nil
}

type htmlWalker struct {
	p       Parsed
	path    []string
	levels  []int
	buf     strings.Builder
	firstH1 string
}

func (w *htmlWalker) flush() {
	if t := collapse(w.buf.String()); t != "" {
		w.p.Blocks = append(w.p.Blocks, Block{Kind: BlockParagraph, HeadingPath: w.path, Text: t})
	}
	w.buf.Reset()
}

// collapse folds runs of white space into one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func textOf(n *html.Node, pre bool) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
		case html.ElementNode:
			if n.DataAtom == atom.Script || n.DataAtom == atom.Style {
				return
			}
			if !pre && (n.DataAtom == atom.Br || n.DataAtom == atom.Td || n.DataAtom == atom.Th) {
				b.WriteString(" ")
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	if pre {
		return strings.Trim(b.String(), "\n")
	}
	return collapse(b.String())
}

func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

func (w *htmlWalker) walk(n *html.Node) {
	if n.Type == html.TextNode {
		w.buf.WriteString(n.Data)
		return
	}
	if n.Type == html.ElementNode {
		switch n.DataAtom {
		case atom.Script, atom.Style, atom.Noscript, atom.Template:
			return
		case atom.Title:
			if w.p.Title == "" {
				w.p.Title = textOf(n, false)
			}
			return
		case atom.Head:
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && c.DataAtom == atom.Title {
					w.walk(c)
				}
			}
			return
		case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
			w.flush()
			level, title := headingLevel(n.DataAtom), textOf(n, false)
			for len(w.levels) > 0 && w.levels[len(w.levels)-1] >= level {
				w.levels, w.path = w.levels[:len(w.levels)-1], w.path[:len(w.path)-1]
			}
			if title != "" {
				if level == 1 && w.firstH1 == "" {
					w.firstH1 = title
				}
				w.levels = append(w.levels, level)
				w.path = append(w.path[:len(w.path):len(w.path)], title)
			}
			return
		case atom.Pre:
			w.flush()
			if t := textOf(n, true); strings.TrimSpace(t) != "" {
				w.p.Blocks = append(w.p.Blocks, Block{Kind: BlockCode, HeadingPath: w.path, Text: t})
			}
			return
		case atom.Ul, atom.Ol:
			w.flush()
			var items []string
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && c.DataAtom == atom.Li {
					if t := textOf(c, false); t != "" {
						items = append(items, "- "+t)
					}
				}
			}
			if len(items) > 0 {
				w.p.Blocks = append(w.p.Blocks, Block{Kind: BlockList, HeadingPath: w.path, Text: strings.Join(items, "\n"), Items: items})
			}
			return
		case atom.Table:
			w.flush()
			var rows []string
			var walkRows func(*html.Node)
			walkRows = func(m *html.Node) {
				for c := m.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.ElementNode && c.DataAtom == atom.Tr {
						if t := textOf(c, false); t != "" {
							rows = append(rows, t)
						}
						continue
					}
					walkRows(c)
				}
			}
			walkRows(n)
			if len(rows) > 0 {
				w.p.Blocks = append(w.p.Blocks, Block{Kind: BlockList, HeadingPath: w.path, Text: strings.Join(rows, "\n"), Items: rows})
			}
			return
		}
		if isBlock(n.DataAtom) {
			w.flush()
			defer w.flush()
		}
		if n.DataAtom == atom.Br {
			w.buf.WriteString(" ")
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c)
	}
}

func isBlock(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Blockquote, atom.Main, atom.Header, atom.Footer,
		atom.Aside, atom.Nav, atom.Dl, atom.Dt, atom.Dd, atom.Figure, atom.Figcaption, atom.Li, atom.Body, atom.Hr, atom.Details, atom.Summary:
		return true
	}
	return false
}
