// Package docfiles reads a CAT's documents directory
// (cat.knowledge.documents, relative to the configuration directory): its
// Markdown, plain text and HTML files, and a stamp of them that changes
// whenever one is added, changed or removed, so the caller re-reads only
// then.
package docfiles

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/core/knowledge"
	"github.com/catsrv/catsrv/core/knowledge/retrieval"
)

// Dir reads documents directories under a configuration directory.
type Dir struct{ root string }

// New returns the reader of documents directories under configDir.
func New(configDir string) *Dir { return &Dir{root: configDir} }

// entries are the directory's document files (not recursive; dotfiles
// and other extensions left out), by name.
func (d *Dir) entries(rel string) (string, []fs.FileInfo, error) {
	if !filepath.IsLocal(rel) {
		return "", nil, errs.New(errs.KindInvalid, "cat.knowledge.documents: %q is outside the configuration directory", rel)
	}
	path := filepath.Join(d.root, rel)
	list, err := os.ReadDir(path)
	if err != nil {
		return "", nil, errs.Wrap(errs.KindUnavailable, err, fmt.Sprintf("documents directory %s cannot be read", rel))
	}
	var out []fs.FileInfo
	for _, e := range list {
		if strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() || knowledge.FormatOf(e.Name(), "") == "" {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed since listed
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return path, out, nil
}

// Stamp is the names, sizes and modification times of the directory's
// document files: equal stamps, nothing to re-read.
func (d *Dir) Stamp(rel string) (string, error) {
	_, list, err := d.entries(rel)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, info := range list {
		fmt.Fprintf(&b, "%s\x00%d\x00%d\n", info.Name(), info.Size(), info.ModTime().UnixNano())
	}
	return b.String(), nil
}

// Read returns the directory's document files. A file over
// retrieval.MaxDocumentBytes is left out with an error naming it, the
// others still returned.
func (d *Dir) Read(rel string) ([]retrieval.DirFile, error) {
	path, list, err := d.entries(rel)
	if err != nil {
		return nil, err
	}
	// Files are read through a root handle of the directory, so a name
	// (or a link) never leads outside it.
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, errs.Wrap(errs.KindUnavailable, err, fmt.Sprintf("documents directory %s cannot be read", rel))
	}
	defer root.Close() //nolint:errcheck // read-only handle
	var out []retrieval.DirFile
	var problems []string
	for _, info := range list {
		if info.Size() > retrieval.MaxDocumentBytes {
			problems = append(problems, info.Name()+": larger than 10 MiB")
			continue
		}
		b, err := root.ReadFile(info.Name())
		if err != nil {
			problems = append(problems, info.Name()+": "+err.Error())
			continue
		}
		out = append(out, retrieval.DirFile{Name: info.Name(), Content: b})
	}
	if len(problems) > 0 {
		return out, errs.New(errs.KindInvalid, "documents directory %s: %s", rel, strings.Join(problems, "; "))
	}
	return out, nil
}
