package config

import (
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/auth/prefs"
	"github.com/catsrv/catsrv/core/auth/retention"
	"github.com/catsrv/catsrv/core/auth/session"
)

// TestOperationsTableMatchesConfig holds the settings table of
// docs/operations.md ("## Environment") to Config: every setting has a row
// with its name, flag and default, and every row is a setting.
func TestOperationsTableMatchesConfig(t *testing.T) {
	raw, err := os.ReadFile("../../../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	start := strings.Index(doc, "## Environment\n")
	if start < 0 {
		t.Fatal("docs/operations.md has no ## Environment section")
	}
	section := doc[start+len("## Environment\n"):]
	section = section[:strings.Index(section, "\n## ")]
	type row struct{ flag, def string }
	rows := map[string]row{}
	cell := regexp.MustCompile("^`([^`]*)`$")
	unquote := func(c string) string {
		c = strings.TrimSpace(c)
		if m := cell.FindStringSubmatch(c); m != nil {
			return m[1]
		}
		if c != "" {
			t.Errorf("table cell %q is neither empty nor one `value`", c)
		}
		return ""
	}
	for line := range strings.SplitSeq(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 5 {
			t.Errorf("short table row %q", line)
			continue
		}
		name := unquote(cells[1])
		if _, dup := rows[name]; dup {
			t.Errorf("%s has two rows", name)
		}
		rows[name] = row{flag: strings.TrimPrefix(unquote(cells[2]), "--"), def: unquote(cells[3])}
	}
	want := map[string]row{}
	for _, s := range settings() {
		for name := range strings.SplitSeq(s.env, ",") {
			want[name] = row{flag: s.flag, def: s.def}
		}
	}
	if len(want) < 30 {
		t.Fatalf("only %d settings found in Config", len(want))
	}
	for name, w := range want {
		got, ok := rows[name]
		switch {
		case !ok:
			t.Errorf("docs/operations.md has no row for %s", name)
		case got != w:
			t.Errorf("docs/operations.md row %s: flag %q, default %q; Config: flag %q, default %q", name, got.flag, got.def, w.flag, w.def)
		}
	}
	for name := range rows {
		if _, ok := want[name]; !ok {
			t.Errorf("docs/operations.md lists %s, which Config does not have", name)
		}
	}
}

// TestSecretsOnlyFromTheEnvironment: no secret has a flag, and none
// prints, whichever way a configuration is printed or logged.
func TestSecretsOnlyFromTheEnvironment(t *testing.T) {
	for _, s := range settings() {
		owner := reflect.TypeFor[Config]()
		if s.template { // indexed within a list element
			owner = reflect.TypeFor[OIDCProvider]()
		}
		f := owner.FieldByIndex(s.index)
		isSecret := f.Type == reflect.TypeFor[Secret]() || f.Type == reflect.TypeFor[map[string]Secret]()
		if isSecret && s.flag != "" {
			t.Errorf("secret %s has a flag", s.env)
		}
		if !isSecret && !strings.HasSuffix(s.env, "_FILE") && regexp.MustCompile(`SECRET|API_KEY|PASSWORD|TOKEN`).MatchString(s.env) {
			t.Errorf("%s looks like a secret but is a %s", s.env, f.Type)
		}
	}
	const secret = "s3cret-value-s3cret-value-s3cret-value"
	cfg, err := Load([]string{
		"CATSRV_JWT_SECRET=" + secret, "CATSRV_AGENT_API_KEY=" + secret, "CATSRV_AGENT_API_KEY__DEMO=" + secret,
		"CATSRV_PROVIDER_B_CLIENT_ID=id", "CATSRV_PROVIDER_B_CLIENT_SECRET=" + secret,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.JWTSecret.Value() != secret || cfg.ProviderB.ClientSecret.Value() != secret || cfg.AgentKey("demo") != secret {
		t.Fatal("a secret was not loaded")
	}
	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "cfg", cfg, "secret", cfg.JWTSecret)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "cfg", *cfg, "secret", cfg.JWTSecret)
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{fmt.Sprintf("%v %+v %#v %s", *cfg, *cfg, *cfg, cfg.JWTSecret), logged.String(), string(js)} {
		if strings.Contains(out, secret) {
			t.Fatalf("a secret printed: %s", out)
		}
	}
	if !strings.Contains(string(js), redacted) {
		t.Fatalf("secrets are not shown redacted: %s", js)
	}
}

// TestPrecedence: a flag beats the environment, which beats the default;
// an empty variable is unset.
func TestPrecedence(t *testing.T) {
	load := func(env []string, args ...string) *Config {
		t.Helper()
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		AddFlags(fs, "config", "db", "addr")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(env, fs)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	if c := load(nil); c.DB != "sqlite:./data/catsrv.db" || c.Addr != "127.0.0.1:8080" || c.ConfigDir != "./configs" {
		t.Errorf("defaults: %+v", c)
	}
	if c := load([]string{"CATSRV_DB=sqlite:env.db", "CATSRV_ADDR="}); c.DB != "sqlite:env.db" || c.Addr != "127.0.0.1:8080" {
		t.Errorf("environment: db %q addr %q", c.DB, c.Addr)
	}
	if c := load([]string{"CATSRV_DB=sqlite:env.db"}, "--db", "sqlite:flag.db"); c.DB != "sqlite:flag.db" {
		t.Errorf("flag: db %q", c.DB)
	}
	if c := load([]string{"CATSRV_ADDR=127.0.0.1:9"}); c.PublicURL != "http://127.0.0.1:9" || c.PublicOrigin != "" {
		t.Errorf("public URL from the address: %q, origin %q", c.PublicURL, c.PublicOrigin)
	}
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	AddFlags(fs, "db")
	if fs.Lookup("addr") != nil || fs.Lookup("db") == nil || !strings.Contains(fs.Lookup("db").Usage, "CATSRV_DB") {
		t.Error("AddFlags registers other flags than asked, or hides the variable")
	}
}

// TestDefaultsMatchTheCore keeps the documented defaults equal to the
// core's own.
func TestDefaultsMatchTheCore(t *testing.T) {
	c, err := Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.RefreshTTL != session.DefaultRefreshLifetime || c.MemoryMaxBytes != prefs.DefaultLimits.MaxTotalBytes || c.AuditRetention != retention.DefaultRetention {
		t.Errorf("defaults %s, %d, %s; core %s, %d, %s", c.RefreshTTL, c.MemoryMaxBytes, c.AuditRetention,
			session.DefaultRefreshLifetime, prefs.DefaultLimits.MaxTotalBytes, retention.DefaultRetention)
	}
}

// TestEverySettingIsRead sets each variable to a value other than its
// default and expects its field to change: a setting added to Config but
// not to decode fails here.
func TestEverySettingIsRead(t *testing.T) {
	samples := map[string]string{
		"CATSRV_ADDR": "127.0.0.1:9", "CATSRV_DB": "sqlite:x.db", "CATSRV_CONFIG_DIR": "/etc/catsrv",
		"CATSRV_METRICS_ADDR":         "127.0.0.1:9090",
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
		"CATSRV_PUBLIC_URL":           "http://localhost:9",
		"CATSRV_ADMINS":               "provider_b:1",
		"CATSRV_COOKIE_SAMESITE":      "Strict",
		"CATSRV_COOKIE_INSECURE":      "true",
		"CATSRV_CORS_ALLOWED_ORIGINS": "https://a.example",
		"CATSRV_REFRESH_TTL":          "2h", "CATSRV_MEMORY_MAX_BYTES": "2048",
		"CATSRV_INGEST_MAX_BYTES": "4096", "CATSRV_INGEST_MAX_LINES": "5", "CATSRV_RAW_WHOLE_LISTS": "3",
		"CATSRV_AUTH_RATE_LIMIT": "off", "CATSRV_AUTH_RATE_BURST": "3",
		"CATSRV_AUDIT_RETENTION": "2d", "CATSRV_WAREHOUSE": "sql", "CATSRV_CAT_CONFIG_POLL": "2s", "CATSRV_INDEX_POLL": "1s",
		"CATSRV_RETENTION_INTERVAL":   "10m",
		"CATSRV_JWT_SECRET_FILE":      filepath.Join(t.TempDir(), "no-such-file"),
		"CATSRV_MCP_EAGER_START":      "true",
		"CATSRV_PROVIDER_A_CLIENT_ID": "x", "CATSRV_PROVIDER_A_API_KEY": "x", "CATSRV_PROVIDER_A_BASE_URL": "x",
		"CATSRV_PROVIDER_B_CLIENT_ID": "x", "CATSRV_PROVIDER_B_CLIENT_SECRET": "x",
		"CATSRV_PROVIDER_C_CLIENT_ID": "x", "CATSRV_PROVIDER_C_CLIENT_SECRET": "x", "CATSRV_PROVIDER_C_TENANT_ID": "x",
		"CATSRV_AGENT_API_KEY__<CAT>":                                        "CATSRV_AGENT_API_KEY__DEMO=k",
		"CATSRV_EMBEDDINGS_API_KEY__<CAT>":                                   "CATSRV_EMBEDDINGS_API_KEY__DEMO=k",
		"CATSRV_CAT__<SECTION>__<KEY>,CATSRV_CATS__<NAME>__<SECTION>__<KEY>": "CATSRV_CAT__CAT__CHAT_MODE=agent",
		"CATSRV_OIDC_PROVIDERS":                                              "corp,dex",
		"CATSRV_PROVIDER_<NAME>_ISSUER":                                      "CATSRV_PROVIDER_CORP_ISSUER=https://other.example.com",
		"CATSRV_PROVIDER_<NAME>_REDIRECT_URI":                                "CATSRV_PROVIDER_CORP_REDIRECT_URI=https://cat.example/cb",
	}
	// Every provider is configured, so that changing one variable leaves
	// none half configured.
	var common []string
	for name, v := range samples {
		if strings.HasPrefix(name, "CATSRV_PROVIDER_") {
			common = append(common, name+"=base-"+v)
		}
	}
	// One generic provider, corp (the one whose variables change), and
	// the variables of a second, dex, that CATSRV_OIDC_PROVIDERS may add.
	for _, p := range []string{"CORP", "DEX"} {
		common = append(common, "CATSRV_PROVIDER_"+p+"_ISSUER=https://id.example.com", "CATSRV_PROVIDER_"+p+"_CLIENT_ID=x",
			"CATSRV_PROVIDER_"+p+"_CLIENT_SECRET=x")
	}
	common = append(common, "CATSRV_OIDC_PROVIDERS=corp")
	base, err := Load(common, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range settings() {
		t.Run(s.env, func(t *testing.T) {
			entry := strings.Replace(s.env, "<NAME>", "CORP", 1) + "=" + "changed"
			if v, ok := samples[s.env]; ok {
				entry = s.env + "=" + v
				if strings.Contains(s.env, "<") {
					entry = v
				}
			}
			env := append(slices.Clone(common), entry)
			if s.env == "CATSRV_PUBLIC_URL" || s.env == "CATSRV_COOKIE_INSECURE" {
				env = append(env, "CATSRV_ADDR=localhost:1") // insecure cookies need a local URL
			}
			c, err := Load(env, nil)
			if err != nil {
				t.Fatalf("%s: %v", entry, err)
			}
			field := func(c *Config) any {
				if s.template {
					return reflect.ValueOf(&c.OIDC[0]).Elem().FieldByIndex(s.index).Interface()
				}
				return reflect.ValueOf(c).Elem().FieldByIndex(s.index).Interface()
			}
			got := field(c)
			if reflect.DeepEqual(got, field(base)) {
				t.Errorf("%s left the field at %v", entry, got)
			}
		})
	}
}

// TestBadValuesNameTheVariable: every value a setting cannot take stops
// the load with an error naming the variable.
func TestBadValuesNameTheVariable(t *testing.T) {
	for _, entry := range []string{
		"CATSRV_MEMORY_MAX_BYTES=1", "CATSRV_MEMORY_MAX_BYTES=lots", "CATSRV_WAREHOUSE=cube",
		"CATSRV_COOKIE_INSECURE=maybe", "CATSRV_COOKIE_SAMESITE=none", "CATSRV_PUBLIC_URL=ftp://x",
		"CATSRV_REFRESH_TTL=1m", "CATSRV_CAT_CONFIG_POLL=10ms", "CATSRV_CAT_CONFIG_POLL=2m", "CATSRV_CAT_CONFIG_POLL=soon", "CATSRV_INDEX_POLL=0", "CATSRV_AUTH_RATE_LIMIT=-1", "CATSRV_AUTH_RATE_BURST=0",
		"CATSRV_AUDIT_RETENTION=10m", "CATSRV_ADMINS=alice", "CATSRV_CORS_ALLOWED_ORIGINS=*",
		"CATSRV_METRICS_ADDR=9090", "CATSRV_METRICS_ADDR=localhost:",
		"OTEL_EXPORTER_OTLP_ENDPOINT=collector:4318", "OTEL_EXPORTER_OTLP_ENDPOINT=ftp://collector",
		"CATSRV_INGEST_MAX_BYTES=10", "CATSRV_INGEST_MAX_BYTES=2147483648", "CATSRV_INGEST_MAX_LINES=0", "CATSRV_INGEST_MAX_LINES=x",
		"CATSRV_RAW_WHOLE_LISTS=0", "CATSRV_RAW_WHOLE_LISTS=65", "CATSRV_RAW_WHOLE_LISTS=many",
		"CATSRV_MCP_EAGER_START=maybe",
	} {
		name, _, _ := strings.Cut(entry, "=")
		if _, err := Load([]string{entry}, nil); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming %s", entry, err, name)
		}
	}
	for _, env := range [][]string{
		{"CATSRV_OIDC_PROVIDERS=Corp"}, {"CATSRV_OIDC_PROVIDERS=providers"}, {"CATSRV_OIDC_PROVIDERS=a"},
		{"CATSRV_OIDC_PROVIDERS=corp"},
		{"CATSRV_OIDC_PROVIDERS=corp,corp", "CATSRV_PROVIDER_CORP_ISSUER=https://id.example.com", "CATSRV_PROVIDER_CORP_CLIENT_ID=x", "CATSRV_PROVIDER_CORP_CLIENT_SECRET=x"},
	} {
		if _, err := Load(env, nil); err == nil || !strings.Contains(err.Error(), "CATSRV_OIDC_PROVIDERS") {
			t.Errorf("%v: error %v, want one naming CATSRV_OIDC_PROVIDERS", env, err)
		}
	}
	generic := []string{"CATSRV_OIDC_PROVIDERS=corp", "CATSRV_PROVIDER_CORP_CLIENT_ID=x", "CATSRV_PROVIDER_CORP_CLIENT_SECRET=x"}
	for _, entry := range []string{"CATSRV_PROVIDER_CORP_ISSUER=http://id.example.com", "CATSRV_PROVIDER_CORP_REDIRECT_URI=ftp://x"} {
		name, _, _ := strings.Cut(entry, "=")
		env := append(slices.Clone(generic), entry)
		if !strings.Contains(entry, "ISSUER") {
			env = append(env, "CATSRV_PROVIDER_CORP_ISSUER=https://id.example.com")
		}
		if _, err := Load(env, nil); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming %s", entry, err, name)
		}
	}
	if _, err := Load([]string{"CATSRV_PROVIDER_C_CLIENT_ID=x"}, nil); err == nil ||
		!strings.Contains(err.Error(), "CATSRV_PROVIDER_C_CLIENT_SECRET, CATSRV_PROVIDER_C_TENANT_ID") {
		t.Errorf("half-configured provider_c: %v", err)
	}
}

func TestEmbeddingsKey(t *testing.T) {
	keys, err := Load([]string{"CATSRV_EMBEDDINGS_API_KEY=all", "CATSRV_EMBEDDINGS_API_KEY__MY_CAT=mine", "CATSRV_EMBEDDINGS_API_KEY__EMPTY=", "CATSRV_AGENT_API_KEY=agent"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for cat, want := range map[string]string{"my-cat": "mine", "demo": "all", "empty": ""} {
		if got := keys.EmbeddingsKey(cat); got != want {
			t.Errorf("key(%s) = %q, want %q", cat, got, want)
		}
	}
}

// TestAgentKey moved here from adapters/openai with the reading
// of the keys: the CAT's own key, else the one for every CAT.
func TestAgentKey(t *testing.T) {
	keys, err := Load([]string{"CATSRV_AGENT_API_KEY=all", "CATSRV_AGENT_API_KEY__MY_CAT=mine", "OTHER=x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for cat, want := range map[string]string{"my-cat": "mine", "demo": "all"} {
		if got := keys.AgentKey(cat); got != want {
			t.Errorf("key(%s) = %q, want %q", cat, got, want)
		}
	}
	none, err := Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := none.AgentKey("demo"); got != "" {
		t.Errorf("no variables: %q", got)
	}
}

// TestGenericProviders reads CATSRV_OIDC_PROVIDERS and each provider's
// variables, with the defaults of the optional ones, and lets
// CATSRV_ADMINS name their users.
func TestGenericProviders(t *testing.T) {
	c, err := Load([]string{
		"CATSRV_PUBLIC_URL=https://cat.example.com/",
		"CATSRV_OIDC_PROVIDERS=corp, dex",
		"CATSRV_PROVIDER_CORP_ISSUER=https://login.corp.example/realms/staff", "CATSRV_PROVIDER_CORP_CLIENT_ID=catsrv",
		"CATSRV_PROVIDER_CORP_CLIENT_SECRET=s1", "CATSRV_PROVIDER_CORP_SCOPES=openid  email groups",
		"CATSRV_PROVIDER_CORP_DISPLAY_NAME=Corp SSO", "CATSRV_PROVIDER_CORP_REDIRECT_URI=https://cat.example.com/cb",
		"CATSRV_PROVIDER_DEX_ISSUER=http://127.0.0.1:5556/dex", "CATSRV_PROVIDER_DEX_CLIENT_ID=cat", "CATSRV_PROVIDER_DEX_CLIENT_SECRET=s2",
		"CATSRV_ADMINS=corp:248289761001,provider_b:7",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []OIDCProvider{
		{Name: "corp", Issuer: "https://login.corp.example/realms/staff", ClientID: "catsrv", ClientSecret: Secret{"s1"},
			Scopes: []string{"openid", "email", "groups"}, DisplayName: "Corp SSO", RedirectURI: "https://cat.example.com/cb"},
		{Name: "dex", Issuer: "http://127.0.0.1:5556/dex", ClientID: "cat", ClientSecret: Secret{"s2"},
			Scopes: []string{"openid", "email", "profile"}, DisplayName: "dex", RedirectURI: "https://cat.example.com/api/v1/auth/dex/callback"},
	}
	if !reflect.DeepEqual(c.OIDC, want) || !slices.Equal(c.OIDCProviders, []string{"corp", "dex"}) {
		t.Fatalf("OIDC %+v, names %v; want %+v", c.OIDC, c.OIDCProviders, want)
	}
	if !slices.Equal(c.Admins, []string{"corp:248289761001", "provider_b:7"}) {
		t.Fatalf("admins %v", c.Admins)
	}
	if fmt.Sprint(c.OIDC[0].ClientSecret) == "s1" {
		t.Fatal("a client secret prints")
	}
	if _, err := Load([]string{"CATSRV_ADMINS=corp:1"}, nil); err == nil || !strings.Contains(err.Error(), "CATSRV_ADMINS") {
		t.Fatalf("an admin of an unlisted provider: %v", err)
	}
}

// TestDecodeErrorsSayWhatTheValueMustBe: a value that does not parse as
// its setting's type (a number, a duration, a boolean) or that its
// setting does not know stops the load with the variable's own message,
// as one out of bounds does.
func TestDecodeErrorsSayWhatTheValueMustBe(t *testing.T) {
	for entry, want := range map[string]string{
		"CATSRV_MEMORY_MAX_BYTES=lots":     "CATSRV_MEMORY_MAX_BYTES must be a number of bytes between 1024 and 16777216",
		"CATSRV_MEMORY_MAX_BYTES=0x800":    "CATSRV_MEMORY_MAX_BYTES must be a number of bytes between 1024 and 16777216",
		"CATSRV_MEMORY_MAX_BYTES=1":        "CATSRV_MEMORY_MAX_BYTES must be a number of bytes between 1024 and 16777216",
		"CATSRV_INGEST_MAX_BYTES=1e6":      "CATSRV_INGEST_MAX_BYTES must be a number of bytes between 1024 and 1073741824",
		"CATSRV_AUTH_RATE_BURST=2.5":       "CATSRV_AUTH_RATE_BURST must be a whole number of requests between 1 and 100000",
		"CATSRV_AUTH_RATE_LIMIT=fast":      "CATSRV_AUTH_RATE_LIMIT must be a number of requests per second per client address (e.g. 1 or 0.5), or off",
		"CATSRV_AUTH_RATE_LIMIT=NaN":       "CATSRV_AUTH_RATE_LIMIT must be a number of requests per second per client address (e.g. 1 or 0.5), or off",
		"CATSRV_REFRESH_TTL=a month":       "CATSRV_REFRESH_TTL must be a duration of at least 1h, e.g. 720h",
		"CATSRV_REFRESH_TTL=30m":           "CATSRV_REFRESH_TTL must be a duration of at least 1h, e.g. 720h",
		"CATSRV_AUDIT_RETENTION=1.5d":      "CATSRV_AUDIT_RETENTION must be whole days (90d) or a duration of at least 1h (2160h), or off",
		"CATSRV_AUDIT_RETENTION=0d":        "CATSRV_AUDIT_RETENTION must be whole days (90d) or a duration of at least 1h (2160h), or off",
		"CATSRV_CAT_CONFIG_POLL=off":       "CATSRV_CAT_CONFIG_POLL must be a duration between 50ms and 1m, e.g. 500ms",
		"CATSRV_INDEX_POLL=quickly":        "CATSRV_INDEX_POLL must be a duration between 50ms and 1m, e.g. 250ms",
		"CATSRV_RETENTION_INTERVAL=hourly": "CATSRV_RETENTION_INTERVAL must be a duration of at least 1m (e.g. 1h), or off",
		"CATSRV_COOKIE_INSECURE=maybe":     "CATSRV_COOKIE_INSECURE must be true or false",
		"CATSRV_MCP_EAGER_START=maybe":     "CATSRV_MCP_EAGER_START must be true or false",
		"CATSRV_COOKIE_SAMESITE=none":      "CATSRV_COOKIE_SAMESITE must be lax or strict",
		"CATSRV_WAREHOUSE=cube":            `CATSRV_WAREHOUSE must be index or sql, not "cube"`,
	} {
		if _, err := Load([]string{entry}, nil); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", entry, err, want)
		}
	}
	for _, entry := range []string{"CATSRV_CAT__CAT__NO_SUCH_KEY=1", "CATSRV_CATS__DEMO__CAT__NO_SUCH_KEY=1"} {
		if _, err := Load([]string{entry}, nil); err == nil || !strings.Contains(err.Error(), "names an unknown key cat.no_such_key") {
			t.Errorf("%s: error %v, want one naming the unknown key", entry, err)
		}
	}
	if _, err := Load([]string{"CATSRV_CAT__CAT__AGENT__TEMPERATURE=warm"}, nil); err == nil ||
		err.Error() != `environment variable CATSRV_CAT__CAT__AGENT__TEMPERATURE: want a number, got "warm"` {
		t.Errorf("an override that does not parse: error %v", err)
	}
}

// TestListsAndUnits: lists are split on commas (scopes on spaces) without
// blanks, durations read days and off, and the values are typed.
func TestListsAndUnits(t *testing.T) {
	c, err := Load([]string{
		"CATSRV_ADMINS= provider_b:1 , ,provider_c:2", "CATSRV_PROVIDER_B_SCOPES=openid  email",
		"CATSRV_AUDIT_RETENTION=30d", "CATSRV_RETENTION_INTERVAL=off", "CATSRV_AUTH_RATE_LIMIT= off ",
		"CATSRV_INGEST_MAX_BYTES=4096", "CATSRV_COOKIE_SAMESITE=Strict", "CATSRV_JWT_SECRET=s3cret",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Admins, []string{"provider_b:1", "provider_c:2"}) || !slices.Equal(c.ProviderB.Scopes, []string{"openid", "email"}) ||
		!slices.Equal(c.ProviderC.Scopes, []string{"openid", "profile", "email", "User.Read"}) {
		t.Errorf("admins %q, provider_b scopes %q, provider_c scopes %q", c.Admins, c.ProviderB.Scopes, c.ProviderC.Scopes)
	}
	if c.AuditRetention != 30*24*time.Hour || c.RetentionInterval != 0 || c.AuthRateLimit != 0 || c.IngestMaxBytes != 4096 ||
		c.CookieSameSite != "strict" || c.JWTSecret.Value() != "s3cret" || c.RefreshTTL != 720*time.Hour {
		t.Errorf("%+v", c)
	}
}
