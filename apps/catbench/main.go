// Command catbench is the benchmark harness behind `make bench`: it
// generates demo logs with `catsrv demo`, imports them into SQLite (and
// into a fresh PostgreSQL database when a DSN is given), serves them with
// `catsrv serve` and drives every analytics route and query mix, then
// legacy-mode chat from many users, over loopback with its own load
// generator, and ingestion over HTTP in batches of 1000 (last: it adds
// to the log). For each back end and scale it prints the targets, a
// summary per route and every route × mix measured, and writes the first
// two into docs/benchmarks.md between markers, so the text around them
// survives a re-run.
//
// It is a benchmark, not a test: figures depend on the machine and on
// whatever else runs on it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// From largeScale interactions the server runs with GOMEMLIMIT set to
// largeScaleMemLimit unless told otherwise.
const (
	largeScale         = 10_000_000
	largeScaleMemLimit = "320MiB"
)

// config is what one harness run does.
type config struct {
	catsrv        string        // path of the catsrv binary
	scale         int           // interactions generated
	scaleName     string        // "1m", "10m", ...
	workDir       string        // data, configs and databases
	postgresDSN   string        // server DSN; empty skips PostgreSQL
	backends      []string      // "sqlite", "postgres"
	fastRequests  int           // requests per cell on the fast routes
	rawRequests   int           // requests per cell on /all and /all_legacy
	cellBudget    time.Duration // a cell stops early after this long (min 3 requests)
	workers       int           // concurrent keep-alive connections
	doc           string        // markdown file the tables are written into; empty skips
	skipImport    bool          // serve the databases a previous run left
	routeFilter   string        // only routes containing this text
	skipRaw       bool          // leave out /all and /all_legacy
	gomemlimit    string        // GOMEMLIMIT of the server; empty leaves it unset
	chats         int           // chats in the chat measurement; 0 skips it
	chatUsers     int           // concurrent chat users, each with its own token and connection
	chatBudget    time.Duration // the chat measurement stops early after this long
	chatInstances int           // PostgreSQL: servers on one database in the second chat measurement; < 2 skips it
	ingestBatches int           // batches of 1000 in the ingestion measurement; 0 skips it
	agentTurns    int           // agent turns in the agent measurement; 0 skips it
	documents     int           // synthetic documents in the documents measurement; 0 skips it
	docQuestions  int           // questions per retrieval kind in the documents measurement
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return // --help printed the flags
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "catbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	cfg, err := parseConfig(args)
	if err != nil {
		return err
	}
	machine := describeMachine()
	if err := os.MkdirAll(cfg.workDir, 0o750); err != nil {
		return err
	}
	if cfg.routeFilter != "" && strings.Contains(docsRoute, cfg.routeFilter) {
		return runDocuments(ctx, cfg, machine)
	}
	fmt.Printf("catbench: %s interactions, %s\n", cfg.scaleName, machine)
	data, err := generate(ctx, cfg)
	if err != nil {
		return err
	}
	for _, backend := range cfg.backends {
		rep, err := benchBackend(ctx, cfg, backend, data)
		if err != nil {
			return fmt.Errorf("%s: %w", backend, err)
		}
		rep.machine = machine
		text := rep.markdown()
		fmt.Println()
		fmt.Print(text)
		fmt.Print(rep.cellTable())
		if cfg.doc != "" {
			if err := writeSection(cfg.doc, rep.sectionName(), text); err != nil {
				return err
			}
		}
	}
	return runDocuments(ctx, cfg, machine)
}

// runDocuments runs the documents measurement on every back end and
// writes its section; nothing when cfg.documents is 0.
func runDocuments(ctx context.Context, cfg config, machine string) error {
	if cfg.documents <= 0 {
		return nil
	}
	fmt.Printf("catbench: %d documents, %s\n", cfg.documents, machine)
	var all []*docsStats
	for _, backend := range cfg.backends {
		st, err := benchDocuments(ctx, cfg, backend)
		if err != nil {
			return fmt.Errorf("%s documents: %w", backend, err)
		}
		all = append(all, st)
	}
	text := docsMarkdown(all)
	fmt.Println()
	fmt.Print(text)
	if cfg.doc != "" {
		return writeSection(cfg.doc, "documents", text)
	}
	return nil
}

func parseConfig(args []string) (config, error) {
	fs := flag.NewFlagSet("catbench", flag.ContinueOnError)
	cfg := config{}
	fs.StringVar(&cfg.catsrv, "catsrv", "bin/catsrv", "catsrv binary to benchmark")
	scale := fs.String("scale", envOr("BENCH_SCALE", "1m"), "interactions: 1m, 10m, or a number (env BENCH_SCALE)")
	fs.StringVar(&cfg.workDir, "dir", envOr("BENCH_DIR", filepath.Join(os.TempDir(), "catbench")), "working directory (env BENCH_DIR)")
	fs.StringVar(&cfg.postgresDSN, "postgres", envOr("BENCH_POSTGRES_DSN", os.Getenv("CATSRV_TEST_POSTGRES_DSN")),
		"PostgreSQL server DSN; a fresh database is created on it (env BENCH_POSTGRES_DSN, else CATSRV_TEST_POSTGRES_DSN)")
	backends := fs.String("backends", envOr("BENCH_BACKENDS", "sqlite,postgres"), "back ends to run (env BENCH_BACKENDS)")
	fs.IntVar(&cfg.fastRequests, "requests", 200, "requests per route and mix on the fast routes")
	fs.IntVar(&cfg.rawRequests, "raw-requests", 20, "requests per mix on /all and /all_legacy")
	fs.DurationVar(&cfg.cellBudget, "cell-budget", 6*time.Second, "stop a route and mix after this long (at least 3 requests)")
	fs.IntVar(&cfg.workers, "workers", 2, "concurrent keep-alive connections")
	fs.BoolVar(&cfg.skipImport, "skip-import", false, "reuse the databases of a previous run of the same scale (import figures are then not measured)")
	fs.StringVar(&cfg.routeFilter, "routes", "", "only the routes whose path contains this text (\"chat\": only the chat measurement)")
	fs.IntVar(&cfg.chats, "chats", 2000, "chats in the legacy-mode chat measurement (0 skips it)")
	fs.IntVar(&cfg.chatUsers, "chat-users", 32, "concurrent chat users")
	fs.DurationVar(&cfg.chatBudget, "chat-budget", 60*time.Second, "stop the chat measurement after this long")
	fs.IntVar(&cfg.chatInstances, "chat-instances", 3, "PostgreSQL: also measure chat with the users spread over this many servers on one database (0 or 1 skips it)")
	fs.IntVar(&cfg.agentTurns, "agent-turns", 300, "agent turns (two tool calls each, against a scripted model) in the agent measurement (0 skips it)")
	fs.IntVar(&cfg.ingestBatches, "ingest-batches", 100, "batches of 1000 interactions in the ingestion measurement (0 skips it)")
	fs.IntVar(&cfg.documents, "documents", envInt("BENCH_DOCUMENTS", 0),
		"synthetic documents (10 chunks each) in the documents measurement, e.g. 10000; 0 skips it; --routes documents runs it alone (env BENCH_DOCUMENTS)")
	fs.IntVar(&cfg.docQuestions, "doc-questions", 300, "questions per retrieval kind in the documents measurement")
	fs.BoolVar(&cfg.skipRaw, "skip-raw", false, "leave out /all and /all_legacy (slow at 10M)")
	fs.StringVar(&cfg.gomemlimit, "gomemlimit", os.Getenv("BENCH_GOMEMLIMIT"),
		"GOMEMLIMIT for the server, e.g. 200MiB (env BENCH_GOMEMLIMIT; default unset below 10M, "+largeScaleMemLimit+" from 10M)")
	fs.StringVar(&cfg.doc, "doc", "docs/benchmarks.md", "markdown file to write the tables into (empty: print only)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	n, name, err := parseScale(*scale)
	if err != nil {
		return cfg, err
	}
	cfg.scale, cfg.scaleName = n, name
	if cfg.gomemlimit == "" && n >= largeScale {
		// As an operator would run it: the 10M index needs the GC to hold
		// the heap under the 384 MiB budget (docs/operations.md, Memory).
		cfg.gomemlimit = largeScaleMemLimit
	}
	for _, b := range strings.Split(*backends, ",") {
		switch b = strings.TrimSpace(b); b {
		case "sqlite":
			cfg.backends = append(cfg.backends, b)
		case "postgres":
			if cfg.postgresDSN == "" {
				fmt.Println("catbench: PostgreSQL skipped (set BENCH_POSTGRES_DSN or CATSRV_TEST_POSTGRES_DSN)")
				continue
			}
			cfg.backends = append(cfg.backends, b)
		case "":
		default:
			return cfg, fmt.Errorf("unknown back end %q", b)
		}
	}
	if cfg.workers < 1 || cfg.fastRequests < 1 || cfg.rawRequests < 1 || cfg.chatUsers < 1 || cfg.chats < 0 || cfg.ingestBatches < 0 ||
		cfg.documents < 0 || cfg.docQuestions < 1 {
		return cfg, errors.New("workers and request counts must be positive")
	}
	return cfg, nil
}

// parseScale reads 1m, 10m, 250k or a plain number.
func parseScale(s string) (int, string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	mult := 1
	switch {
	case strings.HasSuffix(s, "m"):
		mult, s = 1_000_000, strings.TrimSuffix(s, "m")
	case strings.HasSuffix(s, "k"):
		mult, s = 1_000, strings.TrimSuffix(s, "k")
	}
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil || n <= 0 {
		return 0, "", fmt.Errorf("invalid scale %q: use 1m, 10m, 250k or a number", s)
	}
	n *= mult
	name := fmt.Sprint(n)
	switch {
	case n%1_000_000 == 0:
		name = fmt.Sprintf("%dM", n/1_000_000)
	case n%1_000 == 0:
		name = fmt.Sprintf("%dk", n/1_000)
	}
	return n, name, nil
}

func envInt(key string, fallback int) int {
	var n int
	if _, err := fmt.Sscanf(os.Getenv(key), "%d", &n); err == nil {
		return n
	}
	return fallback
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}
