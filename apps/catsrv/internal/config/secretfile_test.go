package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJWTSecretFile: with CATSRV_JWT_SECRET unset, the secret is read from
// CATSRV_JWT_SECRET_FILE (default ./data/jwt-secret, where make run keeps
// the one it generates) when the file exists; the variable wins; a missing
// file leaves the secret unset; an unreadable or oversized one is an error
// naming the variable.
func TestJWTSecretFile(t *testing.T) {
	const secret = "file-secret-file-secret-file-secret-0123"
	dir := t.TempDir()
	file := filepath.Join(dir, "jwt-secret")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load([]string{"CATSRV_JWT_SECRET_FILE=" + file}, nil)
	if err != nil || c.JWTSecret.Value() != secret {
		t.Fatalf("from the file: %v, %q", err, c.JWTSecret.Value())
	}
	c, err = Load([]string{"CATSRV_JWT_SECRET_FILE=" + file, "CATSRV_JWT_SECRET=env-secret-env-secret-env-secret-0123"}, nil)
	if err != nil || c.JWTSecret.Value() != "env-secret-env-secret-env-secret-0123" {
		t.Fatalf("the variable does not win: %v, %q", err, c.JWTSecret.Value())
	}
	c, err = Load([]string{"CATSRV_JWT_SECRET_FILE=" + filepath.Join(dir, "absent")}, nil)
	if err != nil || c.JWTSecret.Value() != "" {
		t.Fatalf("a missing file: %v, %q", err, c.JWTSecret.Value())
	}

	// The default path is relative to the working directory.
	t.Chdir(dir)
	c, err = Load(nil, nil)
	if err != nil || c.JWTSecretFile != "./data/jwt-secret" || c.JWTSecret.Value() != "" {
		t.Fatalf("no data directory: %v, %q, %q", err, c.JWTSecretFile, c.JWTSecret.Value())
	}
	if err := os.Mkdir("data", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(file, "data/jwt-secret"); err != nil {
		t.Fatal(err)
	}
	c, err = Load(nil, nil)
	if err != nil || c.JWTSecret.Value() != secret {
		t.Fatalf("the default file: %v, %q", err, c.JWTSecret.Value())
	}

	for name, setup := range map[string]func(string) error{
		"a directory": func(p string) error { return os.Mkdir(p, 0o700) },
		"too large":   func(p string) error { return os.WriteFile(p, []byte(strings.Repeat("x", maxSecretFile+1)), 0o600) },
	} {
		p := filepath.Join(t.TempDir(), "secret")
		if err := setup(p); err != nil {
			t.Fatal(err)
		}
		if _, err := Load([]string{"CATSRV_JWT_SECRET_FILE=" + p}, nil); err == nil || !strings.Contains(err.Error(), "CATSRV_JWT_SECRET_FILE") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
