package main

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/authsql"
	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"
	"github.com/catsrv/catsrv/core/auth"
)

func TestAuditCommand(t *testing.T) {
	t.Parallel()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "catsrv.db")
	store, err := sqlstore.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	records, err := authsql.Open(t.Context(), store)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 10, 8, 0, 0, 0, time.UTC)
	for _, e := range []auth.AuditEvent{
		{Time: base, Kind: auth.AuditLoginStart, Provider: "provider_b", Cat: "demo", IP: "10.1.1.1"},
		{Time: base.Add(time.Minute), Kind: auth.AuditLoginSuccess, UserID: "u_ann", Provider: "provider_b", Cat: "demo", IP: "10.1.1.1", UserAgent: "Firefox"},
		{Time: base.Add(48 * time.Hour), Kind: auth.AuditRefreshReuse, UserID: "u_ann", Reason: "rotated refresh token presented again"},
		{Time: base.Add(49 * time.Hour), Kind: auth.AuditLogout, UserID: "u_bob"},
	} {
		if err := records.Record(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want []string // the event column of each printed line
	}{
		{"all", nil, []string{"login_start", "login_success", "refresh_reuse", "logout"}},
		{"since a date", []string{"--since", "2026-01-11"}, []string{"refresh_reuse", "logout"}},
		{"by user", []string{"--user", "u_ann"}, []string{"login_success", "refresh_reuse"}},
		{"since and user", []string{"--since", "2026-01-11T00:00:00Z", "--user", "u_ann"}, []string{"refresh_reuse"}},
		{"limit", []string{"--limit", "1"}, []string{"login_start"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := catsrv(t, nil, nil, append([]string{"audit", "--db", dsn}, c.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if len(lines) != len(c.want)+1 || !strings.HasPrefix(lines[0], "TIME") {
				t.Fatalf("output:\n%s", r.stdout)
			}
			for i, w := range c.want {
				if f := strings.Fields(lines[i+1]); len(f) < 2 || f[1] != w {
					t.Errorf("line %d = %q, want event %s", i+1, lines[i+1], w)
				}
			}
		})
	}
	t.Run("json", func(t *testing.T) {
		r := catsrv(t, nil, nil, "audit", "--db", dsn, "--json", "--user", "u_bob")
		if r.code != 0 || strings.TrimSpace(r.stdout) != `{"time":"2026-01-12T09:00:00Z","event":"logout","user":"u_bob"}` {
			t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("bad since", func(t *testing.T) {
		if r := catsrv(t, nil, nil, "audit", "--db", dsn, "--since", "yesterday"); r.code != 2 || !strings.Contains(r.stderr, "--since") {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
	})
}

func TestAuthEnvironment(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  environ
		want string // a fragment of the error; "" for success
	}{
		{"nothing set", environ{}, ""},
		{"insecure cookies on localhost", environ{"CATSRV_COOKIE_INSECURE=true"}, ""},
		{"insecure cookies in production", environ{"CATSRV_COOKIE_INSECURE=true", "CATSRV_PUBLIC_URL=https://cat.example.com"}, "only for plain-http development"},
		{"bad SameSite", environ{"CATSRV_COOKIE_SAMESITE=none"}, "lax or strict"},
		{"wildcard origin", environ{"CATSRV_CORS_ALLOWED_ORIGINS=*"}, "not an origin"},
		{"half-configured provider", environ{"CATSRV_PROVIDER_B_CLIENT_ID=x"}, "CATSRV_PROVIDER_B_CLIENT_SECRET"},
		{"configured provider", environ{"CATSRV_PROVIDER_C_CLIENT_ID=x", "CATSRV_PROVIDER_C_CLIENT_SECRET=y", "CATSRV_PROVIDER_C_TENANT_ID=contoso.example"}, ""},
		{"bad tenant", environ{"CATSRV_PROVIDER_C_CLIENT_ID=x", "CATSRV_PROVIDER_C_CLIENT_SECRET=y", "CATSRV_PROVIDER_C_TENANT_ID=../x"}, "tenant id"},
		{"provider_a without base URL", environ{"CATSRV_PROVIDER_A_CLIENT_ID=x", "CATSRV_PROVIDER_A_API_KEY=y"}, "CATSRV_PROVIDER_A_BASE_URL"},
		{"short refresh lifetime", environ{"CATSRV_REFRESH_TTL=5m"}, "CATSRV_REFRESH_TTL"},
		{"admin without a provider", environ{"CATSRV_ADMINS=alice"}, "CATSRV_ADMINS"},
		{"admin at an unknown provider", environ{"CATSRV_ADMINS=provider_z:42"}, "CATSRV_ADMINS"},
		{"admins listed", environ{"CATSRV_ADMINS=provider_b:42, provider_c:0c1d-ab"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store, err := sqlstore.Open(t.Context(), "sqlite::memory:")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = store.Close() })
			env := append(environ{"CATSRV_JWT_SECRET=" + testSecret}, c.env...)
			_, err = serveAuthDeps(t, env, store)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want one mentioning %q", err, c.want)
			}
		})
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// serveAuthDeps builds what serve builds for the auth routes from env (on
// 127.0.0.1:8080, with no CAT): the configuration, then the dependencies.
// An error is either's.
func serveAuthDeps(t *testing.T, env environ, store *sqlstore.Store) (*authapi.Deps, error) {
	t.Helper()
	cfg, err := config.Load(append(environ{"CATSRV_ADDR=127.0.0.1:8080", "CATSRV_CONFIG_DIR=" + t.TempDir()}, env...), nil)
	if err != nil {
		return nil, err
	}
	cats, err := loadCats(cfg)
	if err != nil {
		t.Fatal(err)
	}
	toks, err := tokenService(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return authDeps(t.Context(), cfg, cats, toks, store, discardLogger(), nil)
}
