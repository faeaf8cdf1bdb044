// Package knowledge loads the legacy pipeline's per-CAT knowledge bases
// (question/answer pairs and intents) from files, as a
// ports.KnowledgeSource.
//
// # Files
//
// cat.legacy.knowledge_base names a file relative to the source's
// directory (normally the CAT configuration directory); it cannot reach
// outside it. Two formats, by extension:
//
// YAML (.yaml, .yml):
//
//	entries:
//	  - id: reset-password
//	    question: How do I reset my password?
//	    answer: Use the "forgot password" link on the sign-in page.
//	intents:
//	  - name: billing
//	    keywords: [invoice, refund]
//	    examples: ["I was charged twice"]
//	    answer: Billing questions go to billing@example.com.   # optional
//
// JSON Lines (.jsonl): one object per line, an entry
// {"id": …, "question": …, "answer": …} or an intent
// {"intent": …, "keywords": […], "examples": […], "answer": …}.
//
// A file is read on first use and again whenever its size or modification
// time changes, so editing it needs no restart.
package knowledge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/catsrv/catsrv/core/chat/legacy"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

var _ ports.KnowledgeSource = (*Files)(nil)

// MaxFileBytes bounds a knowledge file: it is held in memory, indexed.
const MaxFileBytes = 32 << 20

// Files reads knowledge bases under one directory. Safe for concurrent use.
type Files struct {
	dir   string
	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	size    int64
	modTime time.Time
	k       *legacy.Knowledge
}

// New returns a source reading files under dir.
func New(dir string) *Files {
	return &Files{dir: dir, cache: map[string]cached{}}
}

// Knowledge returns the knowledge base at path, an empty one for "".
func (f *Files) Knowledge(_ context.Context, path string) (*legacy.Knowledge, error) {
	if path == "" {
		return legacy.NewKnowledge(nil, nil)
	}
	if !filepath.IsLocal(path) {
		return nil, errs.New(errs.KindUnavailable, "knowledge base %q: must be a path inside the configuration directory", path)
	}
	root, err := os.OpenRoot(f.dir)
	if err != nil {
		return nil, errs.Wrap(errs.KindUnavailable, err, "knowledge base directory cannot be opened")
	}
	defer root.Close() //nolint:errcheck // read-only handle
	info, err := root.Stat(path)
	if err != nil {
		return nil, unavailable(path, err)
	}
	f.mu.Lock()
	c, ok := f.cache[path]
	f.mu.Unlock()
	if ok && c.size == info.Size() && c.modTime.Equal(info.ModTime()) {
		return c.k, nil
	}
	k, err := load(root, path)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.cache[path] = cached{size: info.Size(), modTime: info.ModTime(), k: k}
	f.mu.Unlock()
	return k, nil
}

func unavailable(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return errs.Wrap(errs.KindUnavailable, err, "knowledge base "+path+" does not exist")
	}
	return errs.Wrap(errs.KindUnavailable, err, "knowledge base "+path+" cannot be read")
}

func load(root *os.Root, path string) (*legacy.Knowledge, error) {
	file, err := root.Open(path)
	if err != nil {
		return nil, unavailable(path, err)
	}
	defer file.Close() //nolint:errcheck // read-only
	data, err := io.ReadAll(io.LimitReader(file, MaxFileBytes+1))
	if err != nil {
		return nil, unavailable(path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, errs.New(errs.KindUnavailable, "knowledge base %s is larger than %d bytes", path, MaxFileBytes)
	}
	var entries []legacy.Entry
	var intents []legacy.Intent
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		entries, intents, err = parseYAML(data)
	case ".jsonl":
		entries, intents, err = parseJSONL(data)
	default:
		err = errors.New("want a .yaml, .yml or .jsonl file")
	}
	if err != nil {
		return nil, errs.New(errs.KindUnavailable, "knowledge base %s: %v", path, err)
	}
	k, err := legacy.NewKnowledge(entries, intents)
	if err != nil {
		return nil, errs.New(errs.KindUnavailable, "knowledge base %s: %s", path, errs.PublicMessage(err, "invalid"))
	}
	return k, nil
}

func parseYAML(data []byte) ([]legacy.Entry, []legacy.Intent, error) {
	var doc struct {
		Entries []legacy.Entry  `yaml:"entries"`
		Intents []legacy.Intent `yaml:"intents"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	return doc.Entries, doc.Intents, nil
}

// line is one JSON Lines record: an entry, or an intent when Intent is set.
type line struct {
	legacy.Entry
	Intent   string   `json:"intent"`
	Keywords []string `json:"keywords"`
	Examples []string `json:"examples"`
}

func parseJSONL(data []byte) ([]legacy.Entry, []legacy.Intent, error) {
	var entries []legacy.Entry
	var intents []legacy.Intent
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, MaxFileBytes)
	for n := 1; sc.Scan(); n++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var l line
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, nil, errors.New("line " + strconv.Itoa(n) + ": " + err.Error())
		}
		if l.Intent != "" {
			intents = append(intents, legacy.Intent{Name: l.Intent, Keywords: l.Keywords, Examples: l.Examples, Answer: l.Answer})
			continue
		}
		entries = append(entries, l.Entry)
	}
	return entries, intents, sc.Err()
}
