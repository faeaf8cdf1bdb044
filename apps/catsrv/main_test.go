package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/analytics"
)

// These tests hold the binary contract of issue 2 fixed: they build the real
// binary and drive it as a user or a script would.

var binary string

func TestMain(m *testing.M) {
	dir, err := binDir()
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "catsrv")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// binDir returns the directory the test binaries are built into, one per
// checkout, kept between runs: go build leaves an up-to-date binary as it
// is, which spares each run a link of several seconds.
func binDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(wd))
	dir := filepath.Join(os.TempDir(), "catsrv-test-bin-"+hex.EncodeToString(sum[:6]))
	return dir, os.MkdirAll(dir, 0o750)
}

const testSecret = "test-secret-test-secret-test-secret-0123"

type result struct {
	stdout, stderr string
	code           int
}

func catsrv(t *testing.T, stdin io.Reader, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdin = stdin
	cmd.Env = append(append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...), "CATSRV_JWT_SECRET="+testSecret)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errOut.String(), code}
}

func configDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"demo.yaml": "cat:\n  chat_mode: legacy\n",
		"shop.yaml": "security:\n  analytics:\n    public: true\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// apiCount counts the api lines of one CAT in JSON Lines text.
func apiCount(t *testing.T, jsonl, cat string) int64 {
	t.Helper()
	var n int64
	sc := bufio.NewScanner(strings.NewReader(jsonl))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Cat       string `json:"cat"`
			EventKind string `json:"event_kind"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("demo wrote invalid JSON: %v", err)
		}
		if line.Cat == cat && line.EventKind == analytics.EventKindAPI {
			n++
		}
	}
	return n
}

func TestDemoImportTokenServe(t *testing.T) {
	t.Parallel()
	cfg := configDir(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "catsrv.db")

	demo := catsrv(t, nil, nil, "demo", "--interactions", "3000", "--cats", "demo,shop", "--days", "30", "--seed", "7")
	if demo.code != 0 {
		t.Fatalf("demo exit %d: %s", demo.code, demo.stderr)
	}
	if again := catsrv(t, nil, nil, "demo", "--interactions", "3000", "--cats", "demo,shop", "--days", "30", "--seed", "7"); again.stdout != demo.stdout {
		t.Fatal("demo is not deterministic for a seed")
	}
	imp := catsrv(t, strings.NewReader(demo.stdout), nil, "import", "--config", cfg, "--db", db, "-")
	if imp.code != 0 || !strings.Contains(imp.stderr, "imported 3000 interactions") {
		t.Fatalf("import exit %d: %s", imp.code, imp.stderr)
	}
	tok := catsrv(t, nil, nil, "token", "--config", cfg, "--subject", "ops", "--role", "admin", "--ttl", "1h")
	lines := strings.Split(strings.TrimSpace(tok.stdout), "\n")
	token := lines[len(lines)-1]
	if tok.code != 0 || strings.Count(token, ".") != 2 || strings.Contains(token, " ") {
		t.Fatalf("token must be alone on the last line, got %q (exit %d, %s)", tok.stdout, tok.code, tok.stderr)
	}

	srv := startServe(t, cfg, db)
	base, logs := srv.base, srv.logs

	get := func(path, bearer string) (int, map[string]any) {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, base+path, nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatalf("%s: body is not JSON: %v", path, err)
		}
		return resp.StatusCode, body
	}
	want := apiCount(t, demo.stdout, "demo")
	for _, route := range []string{"/api/v1/analytics/all_warehouse", "/api/v1/analytics/all", "/api/v1/analytics/all_legacy"} {
		code, body := get(route+"?catname=demo", token)
		if code != http.StatusOK || int64(body["total_interactions"].(float64)) != want {
			t.Fatalf("%s: %d %v, want total %d", route, code, body["total_interactions"], want)
		}
	}
	if code, _ := get("/api/v1/analytics/all?catname=demo", ""); code != http.StatusUnauthorized {
		t.Fatalf("private CAT without a token: %d", code)
	}
	if code, body := get("/api/v1/analytics/all?catname=shop", ""); code != http.StatusOK || int64(body["total_interactions"].(float64)) != apiCount(t, demo.stdout, "shop") {
		t.Fatalf("public CAT without a token: %d %v", code, body)
	}

	// Ingestion over HTTP with an ingest token minted by the binary:
	// stored once however often it is sent, seen by every route at once,
	// and the token does nothing else.
	minted := catsrv(t, nil, nil, "token", "--config", cfg, "--subject", "feeder", "--role", "ingest", "--cats", "demo", "--ttl", "1h")
	feederLines := strings.Split(strings.TrimSpace(minted.stdout), "\n")
	feeder := feederLines[len(feederLines)-1]
	if minted.code != 0 || !strings.Contains(minted.stdout, "role ingest, CATs demo") {
		t.Fatalf("ingest token: exit %d, %s %s", minted.code, minted.stdout, minted.stderr)
	}
	batch := `{"time":"2025-06-01T10:00:00Z","event_kind":"api","question":"q","answer":"a","topic":"t","model":"m","persona":"p","interaction_id":"e-1"}` + "\n" +
		`{"time":"2025-06-01T10:01:00Z","cat":"demo","event_kind":"api","question":"q","answer":"a","topic":"t","model":"m","persona":"p","interaction_id":"e-2"}` + "\n"
	for _, wantStored := range []float64{2, 0} {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/api/v1/analytics/interactions?catname=demo", strings.NewReader(batch))
		req.Header.Set("Authorization", "Bearer "+feeder)
		req.Header.Set("Content-Type", "application/x-ndjson")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		err = json.NewDecoder(resp.Body).Decode(&got)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || got["stored"] != wantStored || got["already_stored"] != 2-wantStored {
			t.Fatalf("ingest: %d %v %v, want %v stored", resp.StatusCode, got, err, wantStored)
		}
	}
	for _, route := range []string{"/api/v1/analytics/all_warehouse", "/api/v1/analytics/all", "/api/v1/analytics/metrics/total_interactions"} {
		code, body := get(route+"?catname=demo", token)
		if code != http.StatusOK || int64(body["total_interactions"].(float64)) != want+2 {
			t.Fatalf("%s after ingesting: %d %v, want total %d", route, code, body["total_interactions"], want+2)
		}
	}
	if code, _ := get("/api/v1/analytics/all?catname=shop", feeder); code != http.StatusForbidden {
		t.Fatalf("an ingest token reading a public CAT: %d, want 403", code)
	}

	if err := srv.stop(t); err != nil {
		t.Fatalf("serve did not exit cleanly on SIGTERM: %v\n%s", err, logs.String())
	}
	if strings.Contains(logs.String(), token) || strings.Contains(logs.String(), feeder) || strings.Contains(logs.String(), testSecret) {
		t.Fatal("the server logged a token or the secret")
	}
	if !strings.Contains(logs.String(), `"route"`) {
		t.Fatalf("no request log lines:\n%s", logs.String())
	}
}

// syncBuffer collects a child process's output while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func waitReady(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url) // #nosec G107 -- loopback test server
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never became ready", url)
}

func TestImportIsAllOrNothing(t *testing.T) {
	t.Parallel()
	cfg := configDir(t)
	dbPath := filepath.Join(t.TempDir(), "catsrv.db")
	db := "sqlite:" + dbPath
	good := `{"time":"2025-01-02T03:04:05Z","cat":"demo","event_kind":"api","question":"q","answer":"a","topic":"t","model":"m","persona":"p"}`
	file := filepath.Join(t.TempDir(), "in.jsonl")
	body := strings.Join([]string{
		good,
		`{"time":"not a time","cat":"demo","event_kind":"api","question":"q","answer":"a","topic":"t","model":"m","persona":"p"}`,
		good,
		`{"time":"2025-01-02T03:04:05Z","cat":"nope","event_kind":"api","question":"q","answer":"a","topic":"t","model":"m","persona":"p"}`,
		`{oops`,
		good,
	}, "\n")
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}

	strict := catsrv(t, nil, nil, "import", "--config", cfg, "--db", db, file)
	if strict.code == 0 {
		t.Fatalf("an import with invalid lines must fail: %s", strict.stderr)
	}
	for _, line := range []string{"2", "4", "5"} {
		if !strings.Contains(strict.stderr, "line "+line) {
			t.Fatalf("error does not name line %s: %s", line, strict.stderr)
		}
	}
	if n := storedTotal(t, db); n != 0 {
		t.Fatalf("a failed import stored %d interactions", n)
	}

	lenient := catsrv(t, nil, nil, "import", "--config", cfg, "--db", db, "--skip-invalid", file)
	if lenient.code != 0 || !strings.Contains(lenient.stderr, "imported 3 interactions") || !strings.Contains(lenient.stderr, "skipped 3 invalid lines") {
		t.Fatalf("skip-invalid: exit %d: %s", lenient.code, lenient.stderr)
	}
	if n := storedTotal(t, db); n != 3 {
		t.Fatalf("stored %d, want 3", n)
	}
}

func storedTotal(t *testing.T, dsn string) int64 {
	t.Helper()
	store, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c, err := store.Answer(context.Background(), analytics.Query{Cat: "demo"}, analytics.PartTotal)
	if err != nil {
		t.Fatal(err)
	}
	return c.Total
}

func TestOpenAPICommand(t *testing.T) {
	t.Parallel()
	res := catsrv(t, nil, nil, "openapi")
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil || res.code != 0 {
		t.Fatalf("openapi: exit %d, %v", res.code, err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi version %q", doc.OpenAPI)
	}
	for _, p := range []string{"all_warehouse", "all", "all_legacy", "metrics/topic_counts", "metrics/total_interactions", "metrics/model_counts", "questions", "answers", "get_cats"} {
		if _, ok := doc.Paths["/api/v1/analytics/"+p]["get"]; !ok {
			t.Errorf("OpenAPI lacks GET /api/v1/analytics/%s", p)
		}
	}
}

func TestUsageAndStartupErrors(t *testing.T) {
	t.Parallel()
	cfg := configDir(t)
	tests := []struct {
		name     string
		args     []string
		env      []string
		wantCode int
		wantText string
	}{
		{"no command", nil, nil, 2, "Usage:"},
		{"unknown command", []string{"frobnicate"}, nil, 2, `unknown command "frobnicate"`},
		{"unknown flag", []string{"serve", "--bogus"}, nil, 2, "Usage:"},
		{"token without role", []string{"token", "--config", cfg, "--subject", "x"}, nil, 2, "--role"},
		{"ingest token without CATs", []string{"token", "--config", cfg, "--subject", "x", "--role", "ingest"}, nil, 2, "--cats"},
		{"CATs on another role", []string{"token", "--config", cfg, "--subject", "x", "--role", "admin", "--cats", "demo"}, nil, 2, "--cats"},
		{"ingest token for an unknown CAT", []string{"token", "--config", cfg, "--subject", "x", "--role", "ingest", "--cats", "demo,nosuchcat"}, []string{"CATSRV_JWT_SECRET=" + testSecret}, 1, "nosuchcat"},
		{"unknown role", []string{"token", "--config", cfg, "--subject", "x", "--role", "superuser"}, nil, 2, `--role "superuser" is not a role catsrv knows: one of admin, user, ingest`},
		{"role in capitals", []string{"token", "--config", cfg, "--subject", "x", "--role", "Admin"}, nil, 2, `--role "Admin"`},
		{"import without file", []string{"import", "--config", cfg}, nil, 2, "FILE"},
		{"bad DSN", []string{"serve", "--config", cfg, "--db", "mysql://x", "--addr", "127.0.0.1:0"}, nil, 1, "sqlite:"},
		{"missing config dir", []string{"serve", "--config", filepath.Join(cfg, "missing"), "--addr", "127.0.0.1:0"}, nil, 1, "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := catsrv(t, nil, tt.env, tt.args...)
			if res.code != tt.wantCode || !strings.Contains(res.stderr, tt.wantText) {
				t.Fatalf("exit %d (want %d), stderr %q lacks %q", res.code, tt.wantCode, res.stderr, tt.wantText)
			}
		})
	}
}

func TestServeRefusesMissingSecret(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "serve", "--config", configDir(t), "--db", "sqlite:"+filepath.Join(t.TempDir(), "x.db"), "--addr", "127.0.0.1:0")
	cmd.Dir = t.TempDir() // no data/jwt-secret there
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "CATSRV_JWT_SECRET") {
		t.Fatalf("serve without a secret: %v\n%s", err, out)
	}
}

// TestVersion: `catsrv version` and `catsrv --version` print the build's
// version, commit and Go version. The test binary names no release: its
// version is dev, its commit the revision go build stamped.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		r := catsrv(t, nil, nil, arg)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", arg, r.code, r.stderr)
		}
		want := regexp.MustCompile(`^catsrv dev \(commit ([0-9a-f]{40}(-dirty)?|unknown), go1\.\d+(\.\d+)?\S*\)\n$`)
		if !want.MatchString(r.stdout) {
			t.Errorf("%s printed %q", arg, r.stdout)
		}
		if !strings.Contains(r.stdout, runtime.Version()) {
			t.Errorf("%s printed %q, not the Go version %s", arg, r.stdout, runtime.Version())
		}
	}
	if r := catsrv(t, nil, nil, "version", "extra"); r.code != 2 {
		t.Errorf("version extra: exit %d", r.code)
	}
}

// TestServeWarnsWithoutCats: serve on a configuration directory with no
// CAT file starts (a file may be added) but logs a WARN naming the
// directory.
func TestServeWarnsWithoutCats(t *testing.T) {
	empty := t.TempDir()
	srv := startServe(t, empty, "sqlite:"+filepath.Join(t.TempDir(), "catsrv.db"))
	var warned bool
	for line := range strings.SplitSeq(srv.logs.String(), "\n") {
		var l struct {
			Level, Msg string
			ConfigDir  string `json:"config_dir"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Level == "WARN" && strings.HasPrefix(l.Msg, "no CAT configured") && l.ConfigDir == empty {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no WARN about the missing CAT files:\n%s", srv.logs.String())
	}
	withCats := startServe(t, configDir(t), "sqlite:"+filepath.Join(t.TempDir(), "catsrv.db"))
	if strings.Contains(withCats.logs.String(), "no CAT configured") {
		t.Errorf("a directory with CAT files warned:\n%s", withCats.logs.String())
	}
}

// TestHealthcheck: `catsrv healthcheck` succeeds against a running serve
// (a wildcard listen address asked on loopback) and fails, exit 1, when
// nothing answers.
func TestHealthcheck(t *testing.T) {
	srv := startServe(t, configDir(t), "sqlite:"+filepath.Join(t.TempDir(), "catsrv.db"))
	_, port, err := net.SplitHostPort(strings.TrimPrefix(srv.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"127.0.0.1:" + port, "0.0.0.0:" + port, ":" + port} {
		if r := catsrv(t, nil, []string{"CATSRV_ADDR=" + addr}, "healthcheck"); r.code != 0 || !strings.Contains(r.stdout, "/healthz") {
			t.Errorf("healthcheck of %s: exit %d: %s %s", addr, r.code, r.stdout, r.stderr)
		}
	}
	if r := catsrv(t, nil, nil, "healthcheck", "--addr", freeAddr(t)); r.code != 1 {
		t.Errorf("healthcheck with nothing listening: exit %d: %s", r.code, r.stderr)
	}
}
