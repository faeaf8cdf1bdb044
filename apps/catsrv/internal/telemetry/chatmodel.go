package telemetry

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/ports"
)

// Outcomes of a chat model call, the outcome label's values.
const (
	OutcomeOK              = "ok"
	OutcomeUpstreamFailed  = "upstream_failed"
	OutcomeUpstreamTimeout = "upstream_timeout"
	OutcomeCanceled        = "canceled"
	OutcomeError           = "error"
)

// chatModel counts and times the calls of the model it decorates.
type chatModel struct {
	next     ports.ChatModel
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// ChatModel decorates next so that each call is counted
// (catsrv_chat_model_requests_total) and timed
// (catsrv_chat_model_duration_seconds), by call (complete or stream) and
// outcome (ok, upstream_failed, upstream_timeout, canceled, error), in
// reg.
func ChatModel(reg prometheus.Registerer, next ports.ChatModel) (ports.ChatModel, error) {
	labels := []string{"call", "outcome"}
	m := &chatModel{
		next: next,
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catsrv_chat_model_requests_total",
			Help: "Calls of the agent mode's chat model, by call (complete or stream) and outcome.",
		}, labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "catsrv_chat_model_duration_seconds",
			Help:    "Time a chat model call took (a stream: to its last chunk), by call and outcome.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, labels),
	}
	if err := register(reg, m.calls, m.duration); err != nil {
		return nil, err
	}
	for _, call := range []string{"complete", "stream"} {
		for _, o := range []string{OutcomeOK, OutcomeUpstreamFailed, OutcomeUpstreamTimeout, OutcomeCanceled, OutcomeError} {
			m.calls.WithLabelValues(call, o) // every series from the start, at 0
		}
	}
	return m, nil
}

// Complete calls the model and records the call.
func (m *chatModel) Complete(ctx context.Context, req chat.ModelRequest) (chat.Completion, error) {
	start := time.Now()
	c, err := m.next.Complete(ctx, req)
	m.record(ctx, "complete", start, err)
	return c, err
}

// Stream calls the model and records the call.
func (m *chatModel) Stream(ctx context.Context, req chat.ModelRequest, onDelta func(string) error) (chat.Completion, error) {
	start := time.Now()
	c, err := m.next.Stream(ctx, req, onDelta)
	m.record(ctx, "stream", start, err)
	return c, err
}

// record counts and times one call that ended with err.
func (m *chatModel) record(ctx context.Context, call string, start time.Time, err error) {
	o := outcome(ctx, err)
	m.calls.WithLabelValues(call, o).Inc()
	m.duration.WithLabelValues(call, o).Observe(time.Since(start).Seconds())
}

// outcome names how a call ended.
func outcome(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return OutcomeOK
	case errors.Is(err, chat.ErrUpstreamTimeout):
		return OutcomeUpstreamTimeout
	case errors.Is(err, chat.ErrUpstreamFailed):
		return OutcomeUpstreamFailed
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return OutcomeCanceled
	}
	return OutcomeError
}

// register registers every collector on reg.
func register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
