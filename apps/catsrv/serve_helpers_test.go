package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// served is a `catsrv serve` process of a test, killed when the test ends.
type served struct {
	base string
	logs *syncBuffer
	proc *os.Process
	// exited is closed when the process has ended, with its exit error
	// in err.
	exited chan struct{}
	err    error
}

// kill ends the process with SIGKILL and waits for it.
func (s *served) kill() { _ = s.proc.Kill(); <-s.exited }

// stop sends the process SIGTERM and returns its exit error, failing the
// test when it has not ended within 20 s.
func (s *served) stop(t *testing.T) error {
	t.Helper()
	if err := s.proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exited:
		return s.err
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not stop within 20s of SIGTERM\n%s", s.logs.String())
	}
	return nil
}

// startServe starts `catsrv serve` on the configuration directory and
// the database, with the test secret and the extra environment
// (NAME=value), on a port the process picks itself, and waits until it
// is ready.
func startServe(t *testing.T, cfg, db string, env ...string) *served {
	t.Helper()
	return startServeAt(t, "127.0.0.1:0", cfg, db, env...)
}

// startServeAt is startServe listening on addr (host:port).
func startServeAt(t *testing.T, addr, cfg, db string, env ...string) *served {
	t.Helper()
	s, err := launchServe(t, addr, cfg, db, env...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startServeOnFreePort is startServe on a port chosen before the start,
// for tests whose logins need the server's URL (CATSRV_PUBLIC_URL
// defaults to http://<addr>); when another process took that port
// meanwhile, it tries another.
func startServeOnFreePort(t *testing.T, cfg, db string, env ...string) *served {
	t.Helper()
	for try := 1; ; try++ {
		s, err := launchServe(t, freeAddr(t), cfg, db, env...)
		if err == nil {
			return s
		}
		if try == 3 || !strings.Contains(s.logs.String(), "address already in use") {
			t.Fatal(err)
		}
	}
}

// launchServe starts `catsrv serve` on addr and waits until it is ready;
// it returns an error when the process ends first.
func launchServe(t *testing.T, addr, cfg, db string, env ...string) (*served, error) {
	t.Helper()
	srv := exec.Command(binary, "serve", "--config", cfg, "--db", db, "--addr", addr)
	srv.Env = append([]string{"PATH=" + os.Getenv("PATH"), "CATSRV_JWT_SECRET=" + testSecret}, env...)
	return runServe(t, srv)
}

// runServe starts a `catsrv serve` command, killed when the test ends,
// and waits until it is ready; it returns an error when the process ends
// first.
func runServe(t *testing.T, srv *exec.Cmd) (*served, error) {
	t.Helper()
	s := &served{logs: &syncBuffer{}, exited: make(chan struct{})}
	srv.Stderr = s.logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	s.proc = srv.Process
	go func() { s.err = srv.Wait(); close(s.exited) }()
	t.Cleanup(s.kill)
	base, err := waitLogURL(s.logs, "catsrv starting", s.exited)
	if err != nil {
		return s, err
	}
	s.base = base
	waitReady(t, s.base+"/readyz")
	return s, nil
}

// logURL waits for the process's first log line with the message and
// returns its url: the address it listens on, which it picked itself
// when given port 0, so that parallel tests never share a port.
func (s *served) logURL(t *testing.T, msg string) string {
	t.Helper()
	url, err := waitLogURL(s.logs, msg, s.exited)
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// waitLogURL waits up to 20 s for a JSON log line in logs with the
// message and returns its url; exited closed first ends the wait.
func waitLogURL(logs *syncBuffer, msg string, exited <-chan struct{}) (string, error) {
	deadline := time.After(20 * time.Second)
	for {
		for line := range strings.Lines(logs.String()) {
			var l struct{ Msg, URL string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == msg && l.URL != "" {
				return l.URL, nil
			}
		}
		select {
		case <-exited:
			return "", fmt.Errorf("serve ended before logging %q:\n%s", msg, logs.String())
		case <-deadline:
			return "", fmt.Errorf("serve never logged %q:\n%s", msg, logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
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
