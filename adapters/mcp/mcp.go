// Package mcp is the ports.Toolbox of the agent: each CAT's MCP servers
// (cat.agent.mcp_servers) spoken to with github.com/modelcontextprotocol/go-sdk,
// a command over stdio (a child process started on first use, shared by
// turns, restarted with back-off when it dies, stopped by Close) or a URL
// over streamable HTTP, falling back to SSE.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

// Options configure a Toolbox. Zero values take the defaults.
type Options struct {
	// Logger receives server starts, deaths and their stderr; nil discards.
	Logger *slog.Logger
	// Env is the environment every stdio server starts with (a server's
	// own env keys are added to it). The composition root passes its
	// process's environment without catsrv's own secrets.
	Env []string
	// HTTPClient's transport carries HTTP servers' requests, with their
	// headers added; nil uses http.DefaultTransport.
	HTTPClient *http.Client
	// MinBackoff and MaxBackoff bound the wait before a server that died or
	// failed to start is started again (doubling from min to max).
	MinBackoff, MaxBackoff time.Duration
	// ConnectTimeout bounds one start: the process and MCP's initialize.
	ConnectTimeout time.Duration
	// TerminateWait is how long a stopping stdio server gets after its
	// stdin closes before SIGTERM, and again before SIGKILL.
	TerminateWait time.Duration
}

// Toolbox runs the MCP servers of every CAT it is asked about. It is safe
// for concurrent use; Close stops every server.
type Toolbox struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	servers map[string]*server // by CAT name + "\x00" + server name
	closed  bool
}

// New returns a Toolbox that starts no server until one is used.
func New(opts Options) *Toolbox {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 500 * time.Millisecond
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(30*time.Second, opts.MinBackoff)
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = time.Minute
	}
	if opts.TerminateWait <= 0 {
		opts.TerminateWait = 2 * time.Second
	}
	return &Toolbox{opts: opts, log: opts.Logger, servers: map[string]*server{}}
}

// errClosed is the failure of a call on a closed Toolbox.
var errClosed = errs.New(errs.KindUnavailable, "the tool servers are stopped")

// serversOf returns the running (or starting) servers of cat, in the
// order of its configuration, creating those not seen yet. A server whose
// configuration changed since it started is stopped and replaced.
func (t *Toolbox) serversOf(cat catconfig.Cat) ([]*server, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, errClosed
	}
	out := make([]*server, 0, len(cat.Chat.Agent.MCPServers))
	seen := map[string]bool{}
	for _, cfg := range cat.Chat.Agent.MCPServers {
		if seen[cfg.Name] {
			continue // a name given twice: the first wins
		}
		seen[cfg.Name] = true
		key := cat.Name + "\x00" + cfg.Name
		s := t.servers[key]
		if s != nil && !s.sameConfig(cfg) {
			go s.close()
			s = nil
		}
		if s == nil {
			s = newServer(t, cat.Name, cfg)
			t.servers[key] = s
		}
		out = append(out, s)
	}
	return out, nil
}

// Start starts cat's servers now rather than on first use, without
// waiting for them (serve's CATSRV_MCP_EAGER_START).
func (t *Toolbox) Start(cat catconfig.Cat) error {
	servers, err := t.serversOf(cat)
	for _, s := range servers {
		s.start()
	}
	return err
}

// Tools lists the tools of cat's servers as "<server>__<tool>". A server
// that is not up (failed to start, restarting, not answering within ctx)
// is left out and logged.
func (t *Toolbox) Tools(ctx context.Context, cat catconfig.Cat, scope chat.ToolScope) ([]chat.ToolSpec, error) {
	set, err := t.toolset(ctx, cat, scope, true)
	if err != nil {
		return nil, err
	}
	return set.specs, nil
}

// Call runs the tool named name (as Tools names it) with arguments, a
// JSON object, bounded by ctx.
func (t *Toolbox) Call(ctx context.Context, cat catconfig.Cat, scope chat.ToolScope, name string, arguments []byte) (chat.ToolOutput, error) {
	if len(arguments) > 0 && !json.Valid(arguments) {
		return chat.ToolOutput{}, errs.New(errs.KindInvalid, "the arguments of %s are not JSON", name)
	}
	// The servers that are up name the tools at once; only a name none
	// of them gives waits for the servers still starting.
	set, err := t.toolset(ctx, cat, scope, false)
	if err != nil {
		return chat.ToolOutput{}, err
	}
	i := slices.IndexFunc(set.specs, func(s chat.ToolSpec) bool { return s.Name == name })
	if i < 0 {
		if set, err = t.toolset(ctx, cat, scope, true); err != nil {
			return chat.ToolOutput{}, err
		}
		i = slices.IndexFunc(set.specs, func(s chat.ToolSpec) bool { return s.Name == name })
	}
	if i < 0 {
		return chat.ToolOutput{}, errs.New(errs.KindNotFound, "no tool %q", name)
	}
	return set.servers[i].call(withScope(ctx, scope), set.specs[i].Tool, arguments)
}

// Close stops every server and waits for them (each stdio process gets
// its stdin closed, then SIGTERM, then SIGKILL, with its process group).
func (t *Toolbox) Close() error {
	t.mu.Lock()
	t.closed = true
	servers := t.servers
	t.servers = map[string]*server{}
	t.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(s.close)
	}
	wg.Wait()
	return nil
}

// toolset is a CAT's tools at one moment, with the server of each.
type toolset struct {
	specs   []chat.ToolSpec
	servers []*server
}

// toolset lists cat's tools from every server that is up, concurrently;
// with wait, from those starting too, waiting for them at most
// cat.agent.tool_timeout_seconds.
func (t *Toolbox) toolset(ctx context.Context, cat catconfig.Cat, scope chat.ToolScope, wait bool) (toolset, error) {
	servers, err := t.serversOf(cat)
	if err != nil {
		return toolset{}, err
	}
	if d := cat.Chat.Agent.ToolTimeoutSeconds; wait && d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(d)*time.Second)
		defer cancel()
	}
	ctx = withScope(ctx, scope)
	lists := make([][]*sdk.Tool, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			tools, err := s.listTools(ctx, wait)
			if err != nil {
				if wait && ctx.Err() == nil {
					s.logDown(err)
				}
				return
			}
			lists[i] = tools
		})
	}
	wg.Wait()
	var set toolset
	var n namer
	for i, s := range servers {
		for _, tool := range lists[i] {
			params, err := json.Marshal(tool.InputSchema)
			if err != nil || tool.InputSchema == nil {
				params = []byte(`{"type":"object"}`)
			}
			set.specs = append(set.specs, chat.ToolSpec{
				Name: n.name(s.cfg.Name, tool.Name), Server: s.cfg.Name, Tool: tool.Name,
				Description: tool.Description, Parameters: params,
			})
			set.servers = append(set.servers, s)
		}
	}
	return set, nil
}

// textOf joins a result's content into text: text parts as they are,
// embedded text resources by their text, other parts as a short marker,
// and the structured content when there is nothing else.
func textOf(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, "[resource "+c.Resource.URI+"]")
			}
		case *sdk.ResourceLink:
			parts = append(parts, "[resource link "+c.URI+"]")
		case *sdk.ImageContent:
			parts = append(parts, "[image "+c.MIMEType+"]")
		case *sdk.AudioContent:
			parts = append(parts, "[audio "+c.MIMEType+"]")
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

// callError classifies the failure of a call that could not be made.
func callError(ctx context.Context, server, tool string, err error) error {
	switch {
	case ctx.Err() != nil:
		return errs.Wrap(errs.KindUnavailable, errors.Join(ctx.Err(), err), "tool "+server+"/"+tool+" did not answer in time")
	case errs.KindOf(err) != errs.KindInternal:
		return err
	}
	return errs.Wrap(errs.KindUnavailable, err, "tool "+server+"/"+tool+" failed")
}
