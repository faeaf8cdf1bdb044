package main

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestAuditEscapesHostileText sends an unauthenticated login callback
// whose provider error carries terminal escapes and a forged line, with a
// user agent that carries bidi and line-separator characters, through the
// real server; then catsrv audit must print every event on one line with
// those characters escaped, and --json must give them back unchanged.
func TestAuditEscapesHostileText(t *testing.T) {
	t.Parallel()
	idp := fakeGoogle(t, "gclient", "gsecret")
	cfg := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg, "shop.yaml"), []byte("security:\n  providers:\n    provider_b: {enabled: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "catsrv.db")
	srv := startServe(t, cfg, db, "CATSRV_COOKIE_INSECURE=true",
		"CATSRV_PROVIDER_B_CLIENT_ID=gclient", "CATSRV_PROVIDER_B_CLIENT_SECRET=gsecret", "CATSRV_PROVIDER_B_BASE_URL="+idp.URL)
	base := srv.base

	const userAgent = "evil\u202eexe.txt\u2028FAKE\u2029\u200b\ufeffend \\x1b"
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, target string) (int, string) {
		t.Helper()
		code, body, _ := send(t, client, method, target, "", "User-Agent", userAgent)
		return code, body
	}
	code, body := do(http.MethodPost, base+"/api/v1/auth/provider_b")
	var start struct {
		AuthorizationURL string `json:"authorization_url"`
	}
	if err := json.Unmarshal([]byte(body), &start); code != http.StatusOK || err != nil {
		t.Fatalf("start: %d %s", code, body)
	}
	authURL, err := url.Parse(start.AuthorizationURL)
	if err != nil {
		t.Fatal(err)
	}
	callback := base + "/api/v1/auth/provider_b/callback?state=" + url.QueryEscape(authURL.Query().Get("state")) +
		"&error=%1b]0%3BPWNED%07%1b[2J&error_description=x%0d%0aFAKE-LINE"
	if code, body = do(http.MethodGet, callback); code != http.StatusUnauthorized {
		t.Fatalf("callback with a provider error: %d %s\n%s", code, body, srv.logs.String())
	}

	// --json: the stored values, unchanged, one valid JSON object a line.
	js := catsrv(t, nil, nil, "audit", "--db", db, "--json")
	if js.code != 0 {
		t.Fatalf("audit --json: exit %d: %s", js.code, js.stderr)
	}
	records := strings.Split(strings.TrimSuffix(js.stdout, "\n"), "\n")
	var failure auditLine
	for _, line := range records {
		var l auditLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("audit --json line %q: %v", line, err)
		}
		if l.Event == "login_failure" {
			failure = l
		}
	}
	const reason = "the identity provider refused the login: \x1b]0;PWNED\x07\x1b[2J x\r\nFAKE-LINE"
	if failure.Reason != reason || failure.UserAgent != userAgent {
		t.Fatalf("--json login_failure = %+v, want reason %q and user agent %q", failure, reason, userAgent)
	}

	// The table: one line per record plus the header, nothing a terminal
	// would act on, and the hostile text visible as escapes.
	table := catsrv(t, nil, nil, "audit", "--db", db)
	if table.code != 0 {
		t.Fatalf("audit: exit %d: %s", table.code, table.stderr)
	}
	out := table.stdout
	for i := 0; i < len(out); i++ {
		if c := out[i]; (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
			t.Fatalf("byte %#02x at %d of the table:\n%q", c, i, out)
		}
	}
	if !utf8.ValidString(out) {
		t.Fatalf("the table is not UTF-8: %q", out)
	}
	for _, r := range out {
		if (r >= 0x80 && r <= 0x9f) || r == '\u202e' || r == '\u2028' || r == '\u2029' || r == '\u200b' || r == '\ufeff' {
			t.Fatalf("character %U in the table:\n%q", r, out)
		}
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(records)+1 {
		t.Fatalf("%d table lines for %d records:\n%s", len(lines), len(records), out)
	}
	var failureLine string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 1 && f[1] == "login_failure" {
			failureLine = l
		}
	}
	for _, want := range []string{
		`refused the login: \x1b]0;PWNED\x07\x1b[2J x\x0d\x0aFAKE-LINE`,
		`evil\u202eexe.txt\u2028FAKE\u2029\u200b\ufeffend \\x1b`,
	} {
		if !strings.Contains(failureLine, want) {
			t.Errorf("the login_failure line lacks %s:\n%s", want, failureLine)
		}
	}
}

func TestPrintable(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain text, accents: é ü 猫 🐱": "plain text, accents: é ü 猫 🐱",
		"tab\tnul\x00bel\x07del\x7f":   `tab\x09nul\x00bel\x07del\x7f`,
		"c1 \u0085 \u009b[2J":          `c1 \u0085 \u009b[2J`,
		"bidi \u202e \u2066 \u200f":    `bidi \u202e \u2066 \u200f`,
		"lines \u2028 \u2029":          `lines \u2028 \u2029`,
		"tag \U000e0001":               `tag \U000e0001`,
		"bytes \xff\xfe \xc3":          `bytes \xff\xfe \xc3`,
		`back\slash \x1b`:              `back\\slash \\x1b`,
		"nbsp\u00a0and U+FFFD \ufffd":  "nbsp\u00a0and U+FFFD \ufffd",
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}
