package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// served is a `catsrv serve` process of a test, killed when the test ends.
type served struct {
	base string
	logs *syncBuffer
	proc *os.Process
}

// startServe starts `catsrv serve` on the configuration directory and
// the database, with the test secret and the extra environment
// (NAME=value), and waits until it is ready.
func startServe(t *testing.T, cfg, db string, env ...string) *served {
	t.Helper()
	return startServeAt(t, freeAddr(t), cfg, db, env...)
}

// startServeAt is startServe listening on addr (host:port).
func startServeAt(t *testing.T, addr, cfg, db string, env ...string) *served {
	t.Helper()
	srv := exec.Command(binary, "serve", "--config", cfg, "--db", db, "--addr", addr)
	srv.Env = append([]string{"PATH=" + os.Getenv("PATH"), "CATSRV_JWT_SECRET=" + testSecret}, env...)
	s := &served{base: "http://" + addr, logs: &syncBuffer{}}
	srv.Stderr = s.logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	s.proc = srv.Process
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	waitReady(t, s.base+"/readyz")
	return s
}

// issueToken returns an access token of `catsrv token` for the subject
// and role.
func issueToken(t *testing.T, cfg, subject, role string) string {
	t.Helper()
	out := catsrv(t, nil, nil, "token", "--config", cfg, "--subject", subject, "--role", role, "--ttl", "1h")
	if out.code != 0 {
		t.Fatalf("token exit %d: %s", out.code, out.stderr)
	}
	lines := strings.Split(strings.TrimSpace(out.stdout), "\n")
	return lines[len(lines)-1]
}

// send makes one request with the client (http.DefaultClient when nil)
// and returns the status, the body and the headers. header holds name,
// value pairs; a body is sent as JSON unless they name a Content-Type.
func send(t *testing.T, client *http.Client, method, target, body string, header ...string) (int, string, http.Header) {
	t.Helper()
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(t.Context(), method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(raw), resp.Header
}
