package knowledge_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/files/knowledge"
	"github.com/catsrv/catsrv/core/chat/legacy"
	"github.com/catsrv/catsrv/core/errs"
)

const yamlKB = `entries:
  - id: pw
    question: How do I reset my password?
    answer: Use the reset link.
  - id: hours
    question: What are your opening hours?
    answer: 9 to 5.
intents:
  - name: billing
    keywords: [invoice]
    answer: Ask billing.
`

const jsonlKB = `{"id":"pw","question":"How do I reset my password?","answer":"Use the reset link."}

{"intent":"billing","keywords":["invoice"],"answer":"Ask billing."}
{"id":"hours","question":"What are your opening hours?","answer":"9 to 5."}
`

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLoadsBothFormats(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "kb.yaml", yamlKB)
	write(t, dir, "kb.jsonl", jsonlKB)
	src := knowledge.New(dir)
	for _, name := range []string{"kb.yaml", "kb.jsonl"} {
		t.Run(name, func(t *testing.T) {
			k, err := src.Knowledge(t.Context(), name)
			if err != nil {
				t.Fatal(err)
			}
			p := legacy.New(k, "none", 0.5)
			if got := p.Run("when are your opening hours", []string{"qa"}); got.Model != "qa" || got.Answer != "9 to 5." || got.Sources[0].ID != "hours" {
				t.Fatalf("qa = %+v", got)
			}
			if got := p.Run("my invoice", []string{"intent"}); got.Answer != "Ask billing." || got.Topic != "billing" {
				t.Fatalf("intent = %+v", got)
			}
		})
	}
}

func TestEmptyPathIsAnEmptyBase(t *testing.T) {
	k, err := knowledge.New(t.TempDir()).Knowledge(t.Context(), "")
	if err != nil || k.Len() != 0 {
		t.Fatalf("Knowledge(\"\") = %v, %v", k, err)
	}
}

func TestReloadsAChangedFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "kb.yaml", yamlKB)
	src := knowledge.New(dir)
	first, err := src.Knowledge(t.Context(), "kb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	again, err := src.Knowledge(t.Context(), "kb.yaml")
	if err != nil || again != first {
		t.Fatalf("unchanged file not served from the cache: %v", err)
	}
	write(t, dir, "kb.yaml", "entries:\n  - {id: only, question: one question, answer: one answer}\n")
	future := time.Now().Add(time.Hour) // the mtime differs even on coarse file systems
	if err := os.Chtimes(filepath.Join(dir, "kb.yaml"), future, future); err != nil {
		t.Fatal(err)
	}
	changed, err := src.Knowledge(t.Context(), "kb.yaml")
	if err != nil || changed.Len() != 1 {
		t.Fatalf("after the change: %d entries, %v", changed.Len(), err)
	}
}

func TestRejects(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "unknown.yaml", "entries:\n  - {id: a, question: q, answer: a, colour: red}\n")
	write(t, dir, "dup.jsonl", `{"id":"a","question":"q","answer":"x"}`+"\n"+`{"id":"a","question":"r","answer":"y"}`+"\n")
	write(t, dir, "bad.jsonl", "{not json\n")
	write(t, dir, "kb.txt", "hello")
	cases := []struct{ name, path, want string }{
		{"missing file", "nope.yaml", "does not exist"},
		{"outside the directory", "../etc/passwd", "inside the configuration directory"},
		{"absolute path", "/etc/passwd", "inside the configuration directory"},
		{"unknown field", "unknown.yaml", "colour"},
		{"duplicate id", "dup.jsonl", "duplicate id"},
		{"bad line", "bad.jsonl", "line 1"},
		{"unknown format", "kb.txt", ".jsonl"},
	}
	src := knowledge.New(dir)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := src.Knowledge(t.Context(), c.path)
			if errs.KindOf(err) != errs.KindUnavailable || !strings.Contains(errs.PublicMessage(err, ""), c.want) {
				t.Fatalf("Knowledge(%q) = %v, want unavailable mentioning %q", c.path, err, c.want)
			}
		})
	}
}
