package retrieval

import (
	"context"
	"errors"
	"strings"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/knowledge"
)

// DirFile is a file of a CAT's documents directory.
type DirFile struct {
	Name    string
	Content []byte
}

// OriginDir prefixes the origin of a document loaded from the documents
// directory: "dir:<file name>".
const OriginDir = "dir:"

// SyncDirectory makes the CAT's directory documents those files: each is
// ingested (unchanged content is already stored: nothing happens), and a
// document loaded from the directory whose file is gone or now holds
// other content is deleted. A file that cannot be ingested is skipped and
// reported in the error; the others are still synced. It returns how
// many documents were added and removed.
func (s *Service) SyncDirectory(ctx context.Context, cfg catconfig.Cat, files []DirFile) (added, removed int, err error) {
	keep := map[string]bool{}
	var problems []error
	for _, f := range files {
		doc, created, err := s.Ingest(ctx, cfg, Upload{Filename: f.Name, Format: knowledge.FormatOf(f.Name, ""), Content: f.Content, Origin: OriginDir + f.Name})
		if err != nil {
			problems = append(problems, errors.New(f.Name+": "+err.Error()))
			continue
		}
		keep[doc.ID] = true
		if created {
			added++
		}
	}
	docs, err := s.Documents(ctx, cfg.Name)
	if err != nil {
		return added, removed, err
	}
	for _, d := range docs {
		if strings.HasPrefix(d.Origin, OriginDir) && !keep[d.ID] {
			if err := s.Delete(ctx, cfg.Name, d.ID); err != nil {
				problems = append(problems, err)
				continue
			}
			removed++
		}
	}
	return added, removed, errors.Join(problems...)
}
