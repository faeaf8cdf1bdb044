package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The two CATs of the generated logs; the first is the busiest (2/3).
var benchCats = []string{"support", "sales"}

const (
	benchDays = 365
	benchSeed = 1
)

// dataset is one generated log.
type dataset struct {
	path      string
	configDir string
	knowledge string // the bench knowledge base, relative to configDir
	lines     int
	end       time.Time // exclusive end of the log's window, a UTC midnight
}

// generate writes the demo log (reused when a previous run of the same day
// left it) and a CAT configuration directory.
func generate(ctx context.Context, cfg config) (dataset, error) {
	end := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	ds := dataset{
		path:      filepath.Join(cfg.workDir, fmt.Sprintf("demo-%s-%s.jsonl", cfg.scaleName, end.Format("20060102"))),
		configDir: filepath.Join(cfg.workDir, "configs"),
		lines:     cfg.scale,
		end:       end,
	}
	if err := os.MkdirAll(ds.configDir, 0o750); err != nil {
		return ds, err
	}
	kb, err := writeKnowledge(ds.configDir)
	if err != nil {
		return ds, err
	}
	ds.knowledge = kb
	for _, c := range benchCats {
		yaml := "cat:\n  chat_mode: legacy\n  legacy:\n    models: [greeting, intent, qa, default]\n    knowledge_base: " + kb +
			"\nsecurity:\n  analytics:\n    public: false\n"
		if err := os.WriteFile(filepath.Join(ds.configDir, c+".yaml"), []byte(yaml), 0o600); err != nil {
			return ds, err
		}
	}
	if _, err := os.Stat(ds.path); err == nil {
		fmt.Printf("catbench: reusing %s\n", ds.path)
		return ds, nil
	}
	tmp := ds.path + ".tmp"
	f, err := os.Create(tmp) //nolint:gosec // the operator's working directory
	if err != nil {
		return ds, err
	}
	defer f.Close()
	start := time.Now()
	cmd := exec.CommandContext(ctx, cfg.catsrv, "demo", "--interactions", fmt.Sprint(cfg.scale), //nolint:gosec // runs the binary the operator named
		"--cats", strings.Join(benchCats, ","), "--days", fmt.Sprint(benchDays), "--seed", fmt.Sprint(benchSeed))
	bw := bufio.NewWriterSize(f, 1<<20)
	cmd.Stdout, cmd.Stderr = bw, os.Stderr
	if err := cmd.Run(); err != nil {
		return ds, fmt.Errorf("catsrv demo: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return ds, err
	}
	if err := f.Close(); err != nil {
		return ds, err
	}
	fmt.Printf("catbench: generated %d lines in %s\n", cfg.scale, time.Since(start).Round(time.Millisecond))
	return ds, os.Rename(tmp, ds.path)
}

// benchBackend imports the log into a fresh database of the back end,
// serves it and measures every route and mix.
func benchBackend(ctx context.Context, cfg config, backend string, ds dataset) (*report, error) {
	rep := &report{backend: backend, scale: cfg.scaleName, lines: ds.lines, workers: cfg.workers, gomemlimit: cfg.gomemlimit}
	dsn, size, cleanup, err := freshDatabase(ctx, cfg, backend)
	if err != nil {
		return nil, err
	}
	defer cleanup()

	if !cfg.skipImport {
		fmt.Printf("catbench: %s: importing %d lines...\n", backend, ds.lines)
		start := time.Now()
		cmd := exec.CommandContext(ctx, cfg.catsrv, "import", "--config", ds.configDir, "--db", dsn, ds.path) //nolint:gosec // runs the binary the operator named
		var importErr bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &importErr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("catsrv import: %w: %s", err, importErr.String())
		}
		rep.importTime = time.Since(start)
		rep.importRSS = peakRSSOf(cmd.ProcessState)
		fmt.Printf("catbench: %s: %s", backend, importErr.String())
	}
	if rep.dbBytes, err = size(ctx); err != nil {
		return nil, err
	}

	agentModel := startAgentModel()
	defer agentModel.srv.Close()
	if err := writeAgentCat(ds.configDir, ds.knowledge, agentModel.srv.BaseURL()); err != nil {
		return nil, err
	}
	srv, err := startServer(ctx, cfg, ds, dsn, "serve.log")
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	rep.startup = srv.startup
	rep.rssAfterStart = srv.rss()

	token, err := adminToken(ctx, cfg, ds)
	if err != nil {
		return nil, err
	}
	admin := newClient(srv.base, token, cfg.workers)
	if err := benchAnalytics(ctx, cfg, admin, ds, rep); err != nil {
		return nil, err
	}
	if strings.Contains(chatRoute, cfg.routeFilter) && cfg.chats > 0 {
		tokens, err := userTokens(ctx, cfg, ds, cfg.chatUsers)
		if err != nil {
			return nil, err
		}
		chatClient := newClient(srv.base, token, cfg.chatUsers)
		st, err := driveChat(ctx, []*client{chatClient}, tokens, cfg.chats, cfg.chatBudget)
		if err != nil {
			return nil, fmt.Errorf("chat: %w", err)
		}
		fmt.Printf("  %-28s %-34s %s\n", chatRoute, "legacy mode", st.short())
		rep.chat = &st
		if backend == "postgres" && cfg.chatInstances > 1 {
			if rep.chatMulti, rep.multiRSS, err = benchChatInstances(ctx, cfg, ds, dsn, srv, token, tokens); err != nil {
				return nil, fmt.Errorf("chat on %d instances: %w", cfg.chatInstances, err)
			}
		}
	}
	if strings.Contains(agentRoute, cfg.routeFilter) && cfg.agentTurns > 0 {
		tokens, err := userTokens(ctx, cfg, ds, 1)
		if err != nil {
			return nil, err
		}
		st, err := benchAgent(ctx, srv.base, tokens[0], agentModel, cfg.agentTurns)
		if err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
		fmt.Printf("  %-28s %-34s %s\n", agentRoute, "agent mode, 2 tool calls", st.short())
		rep.agent = &st
	}
	if strings.Contains(ingestRoute, cfg.routeFilter) && cfg.ingestBatches > 0 {
		st, err := benchIngest(ctx, cfg, ds, srv.base, token)
		if err != nil {
			return nil, fmt.Errorf("ingest: %w", err)
		}
		fmt.Printf("  %-28s %-34s %.0f interactions/s (%d batches)\n", ingestRoute, "batches of 1000", st.perSec, st.batches)
		rep.ingest = &st
	}
	rep.peakRSS = srv.rss()
	return rep, nil
}

// benchChatInstances measures chat with the users spread over
// cfg.chatInstances servers on one database: srv and as many more started
// for it (stopped at the end). It returns the measurement and the peak
// RSS of each instance.
func benchChatInstances(ctx context.Context, cfg config, ds dataset, dsn string, srv *server, token string, tokens []string) (*chatStats, []int64, error) {
	servers := []*server{srv}
	defer func() {
		for _, s := range servers[1:] {
			s.stop()
		}
	}()
	for k := 2; k <= cfg.chatInstances; k++ {
		s, err := startServer(ctx, cfg, ds, dsn, fmt.Sprintf("serve-%d.log", k))
		if err != nil {
			return nil, nil, err
		}
		servers = append(servers, s)
	}
	perInstance := max(1, cfg.chatUsers/len(servers))
	clients := make([]*client, len(servers))
	for k, s := range servers {
		clients[k] = newClient(s.base, token, perInstance*2)
	}
	st, err := driveChat(ctx, clients, tokens, cfg.chats, cfg.chatBudget)
	if err != nil {
		return nil, nil, err
	}
	fmt.Printf("  %-28s %-34s %s\n", chatRoute, fmt.Sprintf("legacy mode, %d instances", len(servers)), st.short())
	rss := make([]int64, len(servers))
	for k, s := range servers {
		rss[k] = s.rss()
	}
	return &st, rss, nil
}

// peakRSSOf returns the peak resident set size of an exited process, 0 if
// unknown.
func peakRSSOf(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if u, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return u.Maxrss << 10 // kilobytes on Linux
	}
	return 0
}

// benchAnalytics measures every selected analytics route and mix.
func benchAnalytics(ctx context.Context, cfg config, client *client, ds dataset, rep *report) error {
	selected := slices.ContainsFunc(routes, func(rt route) bool {
		return strings.Contains(rt.path, cfg.routeFilter) && (!rt.raw || !cfg.skipRaw)
	})
	if !selected {
		return nil
	}
	mixes, err := queryMixes(ctx, client, ds)
	if err != nil {
		return err
	}
	for _, rt := range routes {
		if !strings.Contains(rt.path, cfg.routeFilter) || rt.raw && cfg.skipRaw {
			continue
		}
		for _, m := range mixes {
			if m.filtered && !rt.filters {
				continue
			}
			for _, limit := range rt.limits {
				n := cfg.fastRequests
				if rt.raw {
					n = cfg.rawRequests
				}
				c := cell{route: rt.path, mix: m.name, limit: limit}
				params := m.params
				if rt.groupBy != "" {
					params = url.Values{"group_by": {rt.groupBy}}
					for k, v := range m.params {
						params[k] = v
					}
					c.mix += " by " + rt.groupBy
				}
				c.stats, err = client.drive(ctx, rt.path, params, limit, n, cfg.cellBudget)
				if err != nil {
					return fmt.Errorf("%s %s: %w", rt.path, m.name, err)
				}
				fmt.Printf("  %-28s %-24s %-9s %s\n", rt.path, m.name, limitName(limit), c.stats.short())
				rep.cells = append(rep.cells, c)
			}
		}
	}
	return nil
}

// server is a running `catsrv serve`.
type server struct {
	cmd     *exec.Cmd
	base    string
	startup time.Duration
	done    chan struct{} // closed when the process has exited
	exitErr error         // how it exited, once done is closed
}

func startServer(ctx context.Context, cfg config, ds dataset, dsn, logName string) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(cfg.catsrv, "serve", "--config", ds.configDir, "--db", dsn, "--addr", addr) //nolint:gosec // runs the binary the operator named
	cmd.Env = append(os.Environ(), "CATSRV_JWT_SECRET="+benchSecret)
	if cfg.gomemlimit != "" {
		cmd.Env = append(cmd.Env, "GOMEMLIMIT="+cfg.gomemlimit)
	}
	logFile, err := os.Create(filepath.Join(cfg.workDir, logName)) //nolint:gosec // the harness's own working directory and a fixed name
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	start := time.Now()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, err
	}
	s := &server{cmd: cmd, base: "http://" + addr, done: make(chan struct{})}
	go func() {
		s.exitErr = cmd.Wait()
		_ = logFile.Close()
		close(s.done)
	}()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		resp, err := http.Get(s.base + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("catsrv serve exited (see %s): %w", logFile.Name(), s.exitErr)
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, errors.New("catsrv serve did not become ready")
		}
	}
	s.startup = time.Since(start)
	return s, nil
}

// rss returns the server's peak resident set size (VmHWM) in bytes, 0 if
// unknown (not Linux).
func (s *server) rss() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid)) //nolint:gosec // the child's own status file
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// benchSecret signs the harness's tokens; the server lives only for the run.
const benchSecret = "catbench-only-secret-0123456789abcdef0123456789abcdef" //nolint:gosec // a throwaway secret for a local benchmark server

func adminToken(ctx context.Context, cfg config, ds dataset) (string, error) {
	return issueToken(ctx, cfg, ds, "catbench", "admin")
}

// issueToken asks `catsrv token` for a token of the subject and role.
func issueToken(ctx context.Context, cfg config, ds dataset, subject, role string) (string, error) {
	cmd := exec.CommandContext(ctx, cfg.catsrv, "token", "--config", ds.configDir, "--subject", subject, "--role", role, "--ttl", "6h") //nolint:gosec // runs the binary the operator named
	cmd.Env = append(os.Environ(), "CATSRV_JWT_SECRET="+benchSecret)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("catsrv token: %w", err)
	}
	lines := strings.Fields(strings.TrimSpace(string(out)))
	if len(lines) == 0 {
		return "", errors.New("catsrv token printed nothing")
	}
	return lines[len(lines)-1], nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

func limitName(limit int) string {
	if limit == 0 {
		return "no limit"
	}
	return fmt.Sprintf("limit=%d", limit)
}
