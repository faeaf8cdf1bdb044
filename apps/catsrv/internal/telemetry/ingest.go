package telemetry

import (
	"context"
	"iter"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

// ingestOutcomes are the outcome label's values of
// catsrv_ingest_lines_total.
var ingestOutcomes = []string{"stored", "already_stored", "failed"}

// ingestLog counts the interactions appended through it.
type ingestLog struct {
	ports.InteractionLog
	lines *prometheus.CounterVec
}

// IngestLog decorates next so that the interactions each Append is given
// are counted in reg (catsrv_ingest_lines_total) by outcome: stored,
// already_stored (an interaction_id the CAT had: skipped), or failed (the
// Append stored nothing). serve wraps the log of POST
// /api/v1/analytics/interactions with it.
func IngestLog(reg prometheus.Registerer, next ports.InteractionLog) (ports.InteractionLog, error) {
	l := &ingestLog{InteractionLog: next, lines: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "catsrv_ingest_lines_total",
		Help: "Interactions given to POST /api/v1/analytics/interactions to store, by outcome: stored, already_stored or failed.",
	}, []string{"outcome"})}
	for _, o := range ingestOutcomes {
		l.lines.WithLabelValues(o)
	}
	if err := reg.Register(l.lines); err != nil {
		return nil, err
	}
	return l, nil
}

// Append stores through next, counting what the sequence yielded.
func (l *ingestLog) Append(ctx context.Context, interactions iter.Seq2[analytics.Interaction, error]) (int, error) {
	yielded := 0
	stored, err := l.InteractionLog.Append(ctx, func(yield func(analytics.Interaction, error) bool) {
		for in, err := range interactions {
			if err == nil {
				yielded++
			}
			if !yield(in, err) {
				return
			}
		}
	})
	if err != nil {
		l.lines.WithLabelValues("failed").Add(float64(yielded))
		return stored, err
	}
	l.lines.WithLabelValues("stored").Add(float64(stored))
	l.lines.WithLabelValues("already_stored").Add(float64(yielded - stored))
	return stored, nil
}
