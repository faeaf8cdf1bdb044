package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/files/docfiles"
	"github.com/catsrv/catsrv/adapters/openai"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/docsql"
	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
	"github.com/catsrv/catsrv/core/knowledge/retrieval"
)

// evalCmd is `catsrv eval retrieval --config DIR --cat X golden.jsonl`:
// the CAT's documents directory loaded into a scratch SQLite database
// (or --db), then recall@k and MRR of keyword, vector and hybrid
// retrieval over the golden questions.
func evalCmd(ctx context.Context, args []string, env environ, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "retrieval" {
		return fmt.Errorf("eval: the only evaluation is retrieval: %w", errUsage)
	}
	fs := newFlags("eval")
	config.AddFlags(fs.FlagSet, "config")
	catName := fs.String("cat", "", "the CAT whose cat.knowledge.documents are evaluated (required)")
	db := fs.String("db", "", "database to load the documents into (default: a scratch SQLite file, removed after)")
	k := fs.Int("k", 0, "documents counted per question (default: the CAT's cat.knowledge.top_k)")
	if err := fs.parse(args[1:]); err != nil {
		return err
	}
	if *catName == "" || fs.NArg() != 1 {
		return fs.misuse("eval retrieval needs --cat and one golden file (JSON Lines of {\"question\", \"expected\": [document ids]})")
	}
	golden, err := readGolden(fs.Arg(0))
	if err != nil {
		return err
	}
	cfg, err := config.Load(env, fs.FlagSet)
	if err != nil {
		return err
	}
	cats, err := loadCats(cfg)
	if err != nil {
		return err
	}
	cat, err := cats.Cat(ctx, *catName)
	if err != nil {
		return err
	}
	rel := cat.Chat.Knowledge.Documents
	if rel == "" {
		return fmt.Errorf("CAT %s has no cat.knowledge.documents directory to evaluate", *catName)
	}
	if *k <= 0 {
		*k = cat.Chat.Knowledge.TopK
	}
	dsn := *db
	if dsn == "" {
		dir, err := os.MkdirTemp("", "catsrv-eval-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		dsn = "sqlite:" + filepath.Join(dir, "eval.db")
	}
	store, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		return fmt.Errorf("opening database: %w", err)
	}
	defer store.Close()
	docs, err := docsql.Open(ctx, store)
	if err != nil {
		return err
	}
	svc, err := retrieval.New(retrieval.Deps{Store: docs, Embedder: openai.NewEmbedder(openai.Options{APIKey: cfg.EmbeddingsKey, MaxRetries: 2}), Clock: clock.System{}})
	if err != nil {
		return err
	}
	defer svc.Close()
	files, err := docfiles.New(cfg.ConfigDir).Read(rel)
	if err != nil {
		return err
	}
	if _, _, err := svc.SyncDirectory(ctx, cat, files); err != nil {
		return err
	}
	all, err := svc.Documents(ctx, cat.Name)
	if err != nil {
		return err
	}
	known, chunks := map[string]bool{}, 0
	for _, d := range all {
		known[d.ID] = true
		chunks += d.ChunkCount
	}
	for i, g := range golden {
		for _, id := range g.Expected {
			if !known[id] {
				return fmt.Errorf("golden line %d: expected document %q is not among the %d documents of %s", i+1, id, len(all), rel)
			}
		}
	}
	modes := []retrieval.Mode{retrieval.Keyword}
	vectors := "no cat.knowledge.embeddings endpoint: vector and hybrid not measured"
	if e := cat.Chat.Knowledge.Embeddings; e.BaseURL != "" {
		if err := svc.Index(ctx, cat); err != nil {
			vectors = "embeddings failed (" + err.Error() + "): vector and hybrid not measured"
		} else {
			modes = append(modes, retrieval.Vector, retrieval.Hybrid)
			vectors = "embeddings: " + e.Model + " at " + e.BaseURL
		}
	}
	scores, err := svc.Evaluate(ctx, cat, golden, *k, modes...)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "CAT %s: %d documents, %d chunks (chunk_tokens %d), %d questions; %s\n",
		cat.Name, len(all), chunks, cat.Chat.Knowledge.ChunkTokens, len(golden), vectors)
	fmt.Fprintf(stdout, "%-8s  %-9s  %s\n", "mode", fmt.Sprintf("recall@%d", *k), "MRR")
	for _, s := range scores {
		fmt.Fprintf(stdout, "%-8s  %-9.3f  %.3f\n", s.Mode, s.Recall, s.MRR)
	}
	return nil
}

func readGolden(path string) ([]retrieval.Golden, error) {
	f, err := os.Open(path) // #nosec G304 -- the operator names the golden file
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []retrieval.Golden
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var g retrieval.Golden
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&g); err != nil || strings.TrimSpace(g.Question) == "" || len(g.Expected) == 0 {
			return nil, fmt.Errorf("%s line %d: want {\"question\": \"...\", \"expected\": [\"<document id>\", ...]}", path, n)
		}
		out = append(out, g)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no questions", path)
	}
	return out, nil
}
