package telemetry

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/ports"
)

// Outcomes of a tool call, the outcome label's values (with OutcomeOK,
// OutcomeCanceled and OutcomeError).
const (
	OutcomeToolError = "tool_error" // the tool ran and reported a failure
	OutcomeTimeout   = "timeout"    // the call's deadline passed
)

// unknownTool labels a call of a name no listing gave: a model's
// invention must not become a label value of its own.
const unknownTool = "unknown"

// toolbox counts and times the tool calls of the Toolbox it decorates.
type toolbox struct {
	next     ports.Toolbox
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// names maps CAT + "\x00" + tool name to the server and tool it
	// named in the last listing.
	names sync.Map
}

type toolKey struct{ server, tool string }

// Toolbox decorates next so that each tool call is counted
// (catsrv_tool_calls_total) and timed (catsrv_tool_call_duration_seconds)
// by server, tool and outcome (ok, tool_error, timeout, canceled, error),
// in reg. Server and tool come from the listings (Tools); a name no
// listing gave counts as server and tool "unknown".
func Toolbox(reg prometheus.Registerer, next ports.Toolbox) (ports.Toolbox, error) {
	labels := []string{"server", "tool", "outcome"}
	m := &toolbox{
		next: next,
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catsrv_tool_calls_total",
			Help: "Tool calls of the agent's MCP servers, by server, tool and outcome.",
		}, labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "catsrv_tool_call_duration_seconds",
			Help:    "Time a tool call of an MCP server took, by server, tool and outcome.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, labels),
	}
	if err := register(reg, m.calls, m.duration); err != nil {
		return nil, err
	}
	return m, nil
}

// Tools lists the tools and remembers the server and tool of each name.
func (m *toolbox) Tools(ctx context.Context, cat catconfig.Cat, scope chat.ToolScope) ([]chat.ToolSpec, error) {
	specs, err := m.next.Tools(ctx, cat, scope)
	for _, s := range specs {
		m.names.Store(cat.Name+"\x00"+s.Name, toolKey{s.Server, s.Tool})
	}
	return specs, err
}

// Call calls the tool and records the call.
func (m *toolbox) Call(ctx context.Context, cat catconfig.Cat, scope chat.ToolScope, name string, arguments []byte) (chat.ToolOutput, error) {
	start := time.Now()
	out, err := m.next.Call(ctx, cat, scope, name, arguments)
	key := toolKey{unknownTool, unknownTool}
	if k, ok := m.names.Load(cat.Name + "\x00" + name); ok {
		key = k.(toolKey)
	}
	o := toolOutcome(ctx, out, err)
	m.calls.WithLabelValues(key.server, key.tool, o).Inc()
	m.duration.WithLabelValues(key.server, key.tool, o).Observe(time.Since(start).Seconds())
	return out, err
}

// toolOutcome names how a tool call ended.
func toolOutcome(ctx context.Context, out chat.ToolOutput, err error) string {
	switch {
	case err == nil && out.IsError:
		return OutcomeToolError
	case err == nil:
		return OutcomeOK
	case errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimeout
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return OutcomeCanceled
	}
	return OutcomeError
}
