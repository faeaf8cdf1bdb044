package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTokenBesideMakeRun: with CATSRV_JWT_SECRET unset, serve and token
// run from the directory where make run keeps its secret
// (data/jwt-secret) both sign with it: a token minted in a second
// terminal is accepted by the running server, and still after a restart.
func TestTokenBesideMakeRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "jwt-secret"), []byte(strings.Repeat("ab", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := configDir(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	start := func() (base string, stop func()) {
		srv := exec.Command(binary, "serve", "--config", cfg, "--db", "sqlite:data/catsrv.db", "--addr", "127.0.0.1:0")
		srv.Dir, srv.Env = dir, env
		s, err := runServe(t, srv)
		if err != nil {
			t.Fatal(err)
		}
		return s.base, s.kill
	}
	base, stop := start()

	tok := exec.Command(binary, "token", "--config", cfg, "--subject", "alice", "--role", "user")
	tok.Dir, tok.Env = dir, env
	out, err := tok.Output()
	if err != nil {
		t.Fatalf("token beside a running serve: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	token := lines[len(lines)-1]
	if strings.Contains(string(out), strings.Repeat("ab", 32)) {
		t.Fatal("token printed the secret")
	}
	for _, round := range []string{"running", "restarted"} {
		if code, body, _ := send(t, nil, http.MethodGet, base+"/api/v1/cat/conversations?catname=demo", "", "Authorization", "Bearer "+token); code != http.StatusOK {
			t.Fatalf("%s server: the token answered %d %s", round, code, body)
		}
		stop()
		base, stop = start()
	}
}
