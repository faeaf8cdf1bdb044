package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/files/docfiles"
	"github.com/catsrv/catsrv/adapters/openai"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/docsql"
	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
	"github.com/catsrv/catsrv/core/knowledge/retrieval"
	"github.com/catsrv/catsrv/ports"
)

// documentsPoll is how often the documents directories are checked for
// changes (their files' names, sizes and times).
const documentsPoll = 5 * time.Second

// documentService opens the document store in the database and the
// retrieval service over it, with embeddings through the OpenAI-compatible
// adapter (key CATSRV_EMBEDDINGS_API_KEY[__<CAT>]).
func documentService(ctx context.Context, cfg *config.Config, store *sqlstore.Store, logger *slog.Logger, onFallback func(cat, reason string)) (*retrieval.Service, error) {
	docs, err := docsql.Open(ctx, store)
	if err != nil {
		return nil, err
	}
	return retrieval.New(retrieval.Deps{
		Store: docs, Embedder: openai.NewEmbedder(openai.Options{APIKey: cfg.EmbeddingsKey, MaxRetries: 2}),
		Clock: clock.System{}, Log: logger, OnFallback: onFallback,
	})
}

// syncDocuments loads every CAT's cat.knowledge.documents directory now
// and again whenever its files change, until ctx ends; the returned
// function stops it and waits.
func syncDocuments(ctx context.Context, configDir string, cats ports.CatDirectory, svc *retrieval.Service, logger *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	dir := docfiles.New(configDir)
	stamps := map[string]string{}
	pass := func() {
		all, err := cats.Cats(ctx)
		if err != nil {
			return
		}
		for _, cfg := range all {
			name, rel := cfg.Name, cfg.Chat.Knowledge.Documents
			if rel == "" {
				continue
			}
			stamp, err := dir.Stamp(rel)
			if err != nil {
				if stamps[name] != "!" {
					logger.Warn("documents directory unreadable", "cat", name, "dir", rel, "err", err)
				}
				stamps[name] = "!"
				continue
			}
			if stamp == stamps[name] {
				continue
			}
			files, readErr := dir.Read(rel)
			added, removed, err := svc.SyncDirectory(ctx, cfg, files)
			if readErr != nil || err != nil {
				logger.Warn("documents directory partly loaded", "cat", name, "dir", rel, "read_err", readErr, "err", err)
			}
			logger.Info("documents directory loaded", "cat", name, "dir", rel, "files", len(files), "added", added, "removed", removed)
			stamps[name] = stamp
		}
	}
	go func() {
		defer close(done)
		t := time.NewTicker(documentsPoll)
		defer t.Stop()
		for {
			pass()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done; svc.Close() }
}
