package telemetry

import "github.com/prometheus/client_golang/prometheus"

// Reasons a search that should have used vectors used keywords alone.
const (
	FallbackEmbedFailed = "embed_failed"
	FallbackIndexing    = "indexing"
)

// KnowledgeFallbacks registers catsrv_knowledge_keyword_only_total and
// returns what retrieval.Deps.OnFallback calls: one count per search
// served by keywords alone while embeddings are configured, by reason
// (the service failed, or the CAT's vector index is still being built).
func KnowledgeFallbacks(reg prometheus.Registerer) (func(cat, reason string), error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "catsrv_knowledge_keyword_only_total",
		Help: "Document searches served by keyword search alone although embeddings are configured, by reason (embed_failed, indexing).",
	}, []string{"reason"})
	if err := register(reg, c); err != nil {
		return nil, err
	}
	for _, r := range []string{FallbackEmbedFailed, FallbackIndexing} {
		c.WithLabelValues(r)
	}
	return func(_, reason string) { c.WithLabelValues(reason).Inc() }, nil
}
