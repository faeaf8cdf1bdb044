package main

import (
	"strings"
	"testing"

	"github.com/catsrv/catsrv/adapters/sqlstore"
)

// TestPublicOrigin checks that CATSRV_PUBLIC_URL gives the CSRF check the
// server's own origin, scheme and port included.
func TestPublicOrigin(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, url string
		want      string // the origin; "" for none
		err       string // a fragment of the error
	}{
		{"unset", "", "", ""},
		{"https with a path", "https://cat.example.com/catsrv/", "https://cat.example.com", ""},
		{"http with a port", "http://127.0.0.1:8080", "http://127.0.0.1:8080", ""},
		{"not http", "ftp://cat.example.com", "", "not an http or https URL"},
		{"no host", "https:///x", "", "not an http or https URL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store, err := sqlstore.Open(t.Context(), "sqlite::memory:")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = store.Close() })
			env := environ{"CATSRV_JWT_SECRET=" + testSecret}
			if c.url != "" {
				env = append(env, "CATSRV_PUBLIC_URL="+c.url)
			}
			deps, err := serveAuthDeps(t, env, store)
			switch {
			case c.err != "":
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one mentioning %q", err, c.err)
				}
			case err != nil:
				t.Fatal(err)
			case deps.PublicOrigin != c.want:
				t.Fatalf("PublicOrigin = %q, want %q", deps.PublicOrigin, c.want)
			}
		})
	}
}
