package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

// stableAfter is how long a session must last for its server's back-off
// to start again from the minimum.
const stableAfter = time.Minute

// server is one configured MCP server of one CAT: a supervisor goroutine
// (run) keeps a session up, starting it, and after it dies or fails to
// start, starting it again after a back-off, until close.
type server struct {
	t   *Toolbox
	cat string
	cfg catconfig.MCPServer

	mu      sync.Mutex
	started bool
	sess    *sdk.ClientSession
	err     error         // why there is no session, while sess is nil
	attempt chan struct{} // closed when the running start attempt ends; nil between attempts
	tools   []*sdk.Tool   // the session's tool list; nil until listed
	stale   bool          // a tools/list_changed arrived since tools was listed
	logged  error         // the failure last logged by logDown

	stop     chan struct{} // closed by close
	stopOnce sync.Once
	done     chan struct{} // closed when run returns
}

func newServer(t *Toolbox, cat string, cfg catconfig.MCPServer) *server {
	return &server{t: t, cat: cat, cfg: cfg, stop: make(chan struct{}), done: make(chan struct{})}
}

// sameConfig reports whether cfg is the configuration s runs.
func (s *server) sameConfig(cfg catconfig.MCPServer) bool {
	return s.cfg.Name == cfg.Name && slices.Equal(s.cfg.Command, cfg.Command) && maps.Equal(s.cfg.Env, cfg.Env) &&
		s.cfg.URL == cfg.URL && maps.Equal(s.cfg.Headers, cfg.Headers)
}

// start starts the supervisor once.
func (s *server) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		s.started = true
		s.attempt = make(chan struct{})
		go s.run()
	}
}

// session returns the server's session, waiting (within ctx, and if
// wait) for a start attempt under way; a server down between attempts is
// an error at once.
func (s *server) session(ctx context.Context, wait bool) (*sdk.ClientSession, error) {
	s.start()
	for {
		s.mu.Lock()
		sess, err, attempt := s.sess, s.err, s.attempt
		s.mu.Unlock()
		switch {
		case sess != nil:
			return sess, nil
		case attempt == nil:
			return nil, errs.Wrap(errs.KindUnavailable, err, "tool server "+s.cfg.Name+" is down")
		case !wait:
			return nil, errs.New(errs.KindUnavailable, "tool server %s is starting", s.cfg.Name)
		}
		select {
		case <-attempt:
		case <-ctx.Done():
			return nil, errs.Wrap(errs.KindUnavailable, ctx.Err(), "tool server "+s.cfg.Name+" is starting")
		}
	}
}

// run keeps a session up until close.
func (s *server) run() {
	defer close(s.done)
	failures := 0
	for {
		sess, cleanup, err := s.connect()
		began := time.Now()
		s.mu.Lock()
		s.sess, s.err, s.tools, s.stale = sess, err, nil, false
		close(s.attempt)
		s.attempt = nil
		s.mu.Unlock()
		if err == nil {
			s.t.log.Info("mcp server up", "cat", s.cat, "server", s.cfg.Name)
			s.mu.Lock()
			s.logged = nil
			s.mu.Unlock()
			waitErr := make(chan error, 1)
			go func() { waitErr <- sess.Wait() }()
			select {
			case <-s.stop:
				_ = sess.Close()
				cleanup()
				return
			case err = <-waitErr:
			}
			_ = sess.Close()
			cleanup()
			if err == nil {
				err = errors.New("the server ended the session")
			}
			s.mu.Lock()
			s.sess, s.err = nil, err
			s.mu.Unlock()
			if time.Since(began) >= stableAfter {
				failures = 0
			}
		}
		select {
		case <-s.stop:
			return // the failure is the stop's doing
		default:
		}
		failures++
		wait := s.backoff(failures)
		s.t.log.Warn("mcp server down", "cat", s.cat, "server", s.cfg.Name, "err", err.Error(), "retry_in", wait.String())
		select {
		case <-s.stop:
			return
		case <-time.After(wait):
		}
		s.mu.Lock()
		s.attempt = make(chan struct{})
		s.mu.Unlock()
	}
}

// backoff is the wait after the n-th failure in a row.
func (s *server) backoff(n int) time.Duration {
	d := s.t.opts.MinBackoff
	for i := 1; i < n && d < s.t.opts.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, s.t.opts.MaxBackoff)
}

// connect starts the server (a process, or an HTTP session) and
// initializes MCP, bounded by the connect time-out and by close.
// The returned cleanup kills what is left of a stdio server's process
// group once its session is closed.
func (s *server) connect() (_ *sdk.ClientSession, cleanup func(), _ error) {
	// The SSE transport ties its stream to Connect's context: it lasts
	// as long as the session, and a timer bounds the start alone.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	timer := time.AfterFunc(s.t.opts.ConnectTimeout, cancel)
	defer timer.Stop()
	cleanup = cancel
	client := sdk.NewClient(&sdk.Implementation{Name: "catsrv", Version: "1"}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			s.mu.Lock()
			s.stale = true
			s.mu.Unlock()
		},
	})
	if len(s.cfg.Command) > 0 {
		// #nosec G204 -- the operator's command, from the CAT file only (never a request, never /config/sync)
		cmd := exec.Command(s.cfg.Command[0], s.cfg.Command[1:]...)
		cmd.Env = append(slices.Clone(s.t.opts.Env), envList(s.cfg.Env)...)
		cmd.Stderr = &stderrLog{log: s.t.log, cat: s.cat, server: s.cfg.Name}
		cmd.WaitDelay = min(s.t.opts.TerminateWait, 500*time.Millisecond) // for a grandchild holding stderr
		ownGroup(cmd)
		sess, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: s.t.opts.TerminateWait}, nil)
		if err != nil {
			cancel()
			killGroup(cmd)
			return nil, nil, fmt.Errorf("starting %q: %w", s.cfg.Command[0], err)
		}
		return sess, func() { cancel(); killGroup(cmd) }, nil
	}
	// No client time-out: the session's event stream lasts; each call is
	// bounded by its own context.
	httpClient := &http.Client{Transport: &headerTransport{headers: s.cfg.Headers, cat: s.cat, next: baseTransport(s.t.opts.HTTPClient)}}
	sess, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: httpClient, MaxRetries: 2}, nil)
	if err == nil {
		return sess, cleanup, nil
	}
	if ctx.Err() != nil {
		cancel()
		return nil, nil, err
	}
	// An older server speaks only the SSE transport (protocol 2024-11-05).
	sess, sseErr := client.Connect(ctx, &sdk.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: httpClient}, nil)
	if sseErr != nil {
		cancel()
		return nil, nil, fmt.Errorf("streamable HTTP: %w; SSE: %w", err, sseErr)
	}
	s.t.log.Info("mcp server speaks SSE, not streamable HTTP", "cat", s.cat, "server", s.cfg.Name)
	return sess, cleanup, nil
}

// listTools returns the session's tool list, listing it again after a
// tools/list_changed.
func (s *server) listTools(ctx context.Context, wait bool) ([]*sdk.Tool, error) {
	sess, err := s.session(ctx, wait)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	tools, stale := s.tools, s.stale
	s.mu.Unlock()
	if tools != nil && !stale {
		return tools, nil
	}
	s.mu.Lock()
	s.stale = false // a change arriving while listing marks it stale again
	s.mu.Unlock()
	tools = []*sdk.Tool{}
	for tool, err := range sess.Tools(ctx, nil) {
		if err != nil {
			s.mu.Lock()
			s.stale = true
			s.mu.Unlock()
			return nil, fmt.Errorf("listing the tools of %s: %w", s.cfg.Name, err)
		}
		tools = append(tools, tool)
	}
	s.mu.Lock()
	if s.sess == sess {
		s.tools = tools
	}
	s.mu.Unlock()
	return tools, nil
}

// call runs tool with arguments.
func (s *server) call(ctx context.Context, tool string, arguments []byte) (chat.ToolOutput, error) {
	sess, err := s.session(ctx, true)
	if err != nil {
		return chat.ToolOutput{}, err
	}
	params := &sdk.CallToolParams{Name: tool}
	if len(arguments) > 0 {
		params.Arguments = json.RawMessage(arguments)
	}
	res, err := sess.CallTool(ctx, params)
	if err != nil {
		return chat.ToolOutput{}, callError(ctx, s.cfg.Name, tool, err)
	}
	return chat.ToolOutput{Content: textOf(res), IsError: res.IsError}, nil
}

// logDown logs that the server was left out of a tool list, once per
// failure.
func (s *server) logDown(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logged != nil && s.logged.Error() == err.Error() {
		return
	}
	s.logged = err
	s.t.log.Warn("mcp server left out of the tools", "cat", s.cat, "server", s.cfg.Name, "err", err.Error())
}

// close stops the supervisor and waits for it (and so for the session's
// process) to end.
func (s *server) close() {
	s.mu.Lock()
	started := s.started
	s.started = true // no start after close
	s.mu.Unlock()
	s.stopOnce.Do(func() { close(s.stop) })
	if started {
		<-s.done
	}
}

// envList returns env as KEY=value entries, sorted.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}
