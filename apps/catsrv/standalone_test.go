package main

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const repoRoot = "../.."

// mdLink matches the target of a Markdown link or image, ](target), or a
// relative path in a code span, `../x`.
var mdLink = regexp.MustCompile("\\]\\(([^)\\s]+)\\)|`(\\.\\./[^`\\s]+)`")

// TestCloneStandsAlone: a clone of the repository is complete. The README
// and the docs link only to files inside it; go.mod asks for a Go release
// (go 1.26.0: the one a dependency needs), never a patch release that
// would force library users onto it; the client package's documentation
// is catsrv's, without the generator's banner.
func TestCloneStandsAlone(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, md := range append(docs, filepath.Join(repoRoot, "README.md"), filepath.Join(repoRoot, "CHANGELOG.md")) {
		raw, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(raw), -1) {
			target, _, _ := strings.Cut(m[1]+m[2], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path := filepath.Join(filepath.Dir(md), target)
			rel, err := filepath.Rel(repoRoot, path)
			if err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s links outside the repository: %s", md, m[0])
				continue
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to a missing file: %s", md, m[0])
			}
		}
	}

	mod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if goLine == nil || !regexp.MustCompile(`^1\.\d+(\.0)?$`).Match(goLine[1]) {
		t.Errorf("go.mod's go directive is %q, want a release such as 1.26 or 1.26.0, not a patch release", goLine)
	}

	fset := token.NewFileSet()
	sources, err := filepath.Glob(filepath.Join(repoRoot, "client", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range sources {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/catsrv/catsrv/client")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Doc, "Package client is the Go client of catsrv") || strings.Contains(p.Doc, "provides primitives") ||
		strings.Contains(p.Doc, "Code generated") {
		t.Errorf("the client package's documentation:\n%s", p.Doc)
	}
}
