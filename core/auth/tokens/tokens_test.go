package tokens_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/tokens"
	"github.com/catsrv/catsrv/core/errs"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

const (
	issuer   = "catsrv"
	audience = "catsrv-api"
)

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func service(t *testing.T) *tokens.Service {
	t.Helper()
	s, err := tokens.New(secret, issuer, audience, clock.NewFixed(now))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func goodClaims() jwt.MapClaims {
	return jwt.MapClaims{
		"sub": "alice", "role": "admin", "jti": "id-1", "iss": issuer, "aud": audience,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
}

func sign(t *testing.T, m jwt.SigningMethod, key any, c jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(m, c).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// signWithHeader signs the good claims with the right key and extra
// header parameters.
func signWithHeader(t *testing.T, header map[string]any) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, goodClaims())
	for k, v := range header {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(secret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// signRaw signs a payload written by hand with HS256 and the right key.
func signRaw(t *testing.T, payload string) string {
	t.Helper()
	enc := base64.RawURLEncoding
	unsigned := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString([]byte(payload))
	sig, err := jwt.SigningMethodHS256.Sign(unsigned, secret)
	if err != nil {
		t.Fatal(err)
	}
	return unsigned + "." + enc.EncodeToString(sig)
}

func with(change func(jwt.MapClaims)) jwt.MapClaims {
	c := goodClaims()
	change(c)
	return c
}

func TestIssueThenVerify(t *testing.T) {
	s := service(t)
	tok, issued, err := s.Issue("alice", auth.RoleAdmin, 2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Verify(tok)
	if err != nil {
		t.Fatal(err)
	}
	if got.Subject != "alice" || got.Role != auth.RoleAdmin || got.ID != issued.ID || !got.ExpiresAt.Equal(now.Add(2*time.Hour)) {
		t.Fatalf("claims = %+v, issued %+v", got, issued)
	}
	_, second, _ := s.Issue("alice", auth.RoleAdmin, time.Hour)
	if second.ID == issued.ID {
		t.Fatal("every token needs its own jti")
	}
}

func TestVerifyRefusesForgedAndBrokenTokens(t *testing.T) {
	s := service(t)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	good := sign(t, jwt.SigningMethodHS256, secret, goodClaims())
	parts := strings.Split(good, ".")
	userToken := sign(t, jwt.SigningMethodHS256, []byte("x"), with(func(c jwt.MapClaims) { c["sub"] = "mallory" }))
	tests := []struct {
		name  string
		token string
	}{
		{"empty", ""},
		{"garbage", "not-a-jwt"},
		{"alg none", sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, goodClaims())},
		{"HS384 with the right secret", sign(t, jwt.SigningMethodHS384, secret, goodClaims())},
		{"HS512 with the right secret", sign(t, jwt.SigningMethodHS512, secret, goodClaims())},
		{"RS256", sign(t, jwt.SigningMethodRS256, rsaKey, goodClaims())},
		{"wrong secret", sign(t, jwt.SigningMethodHS256, []byte("another-secret-another-secret-xx"), goodClaims())},
		{"tampered payload", parts[0] + "." + strings.Split(userToken, ".")[1] + "." + parts[2]},
		{"signature stripped", parts[0] + "." + parts[1] + "."},
		{"expired beyond leeway", sign(t, jwt.SigningMethodHS256, secret, with(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Minute).Unix() }))},
		{"not yet valid", sign(t, jwt.SigningMethodHS256, secret, with(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Hour).Unix() }))},
		{"issued in the future", sign(t, jwt.SigningMethodHS256, secret, with(func(c jwt.MapClaims) { c["iat"] = now.Add(time.Hour).Unix() }))},
		{"missing exp", sign(t, jwt.SigningMethodHS256, secret, with(func(c jwt.MapClaims) { delete(c, "exp") }))},
		{"wrong issuer", sign(t, jwt.SigningMethodHS256, secret, with(func(c jwt.MapClaims) { c["iss"] = "evil" }))},
		{"missing issuer", sign(t, jwt.SigningMethodHS256, secret, with(func(c jwt.MapClaims) { delete(c, "iss") }))},
		{"wrong audience", sign(t, jwt.SigningMethodHS256, secret, with(func(c jwt.MapClaims) { c["aud"] = "other" }))},
		{"missing subject", sign(t, jwt.SigningMethodHS256, secret, with(func(c jwt.MapClaims) { delete(c, "sub") }))},
		{"missing jti", sign(t, jwt.SigningMethodHS256, secret, with(func(c jwt.MapClaims) { delete(c, "jti") }))},
	}
	// Each signed with the right key, so that only the detail named is
	// wrong: a NumericDate that is not a JSON number (RFC 7519 §2), a crit
	// header catsrv does not understand (RFC 7515 §4.1.11).
	future := now.Add(time.Hour).Unix()
	reasons := map[string]string{} // the public reason of the added cases
	for _, claim := range []string{"exp", "nbf", "iat"} {
		value := goodClaims()[claim].(int64)
		for kind, v := range map[string]any{
			"string":       strconv.FormatInt(value, 10),
			"far string":   "9999999999",
			"float string": strconv.FormatInt(value, 10) + ".0",
			"boolean":      true,
			"object":       map[string]any{"n": value},
			"array":        []any{value},
			"null":         nil,
		} {
			tests = append(tests, struct {
				name  string
				token string
			}{claim + " as " + kind, sign(t, jwt.SigningMethodHS256, secret, with(func(c jwt.MapClaims) { c[claim] = v }))})
			reasons[claim+" as "+kind] = "exp, nbf and iat must be numbers"
		}
	}
	// encoding/json matches keys regardless of case: an upper-case EXP
	// after the real exp sets the expiry.
	for _, claim := range []string{"EXP", "Nbf", "iaT"} {
		name := claim + " as a string after the lower-case claim"
		payload := fmt.Sprintf(`{"sub":"alice","role":"admin","jti":"id-1","iss":%q,"aud":%q,"iat":%d,"nbf":%d,"exp":%d,%q:"%d"}`,
			issuer, audience, now.Unix(), now.Unix(), future, claim, now.Unix())
		tests = append(tests, struct {
			name  string
			token string
		}{name, signRaw(t, payload)})
		reasons[name] = "exp, nbf and iat must be numbers"
	}
	for name, header := range map[string]map[string]any{
		"crit naming an extension":        {"crit": []any{"x-catsrv-ext"}, "x-catsrv-ext": true},
		"crit naming a claim copy":        {"crit": []any{"exp"}, "exp": future},
		"crit with b64 (RFC 7797)":        {"crit": []any{"b64"}, "b64": true},
		"crit empty (invalid)":            {"crit": []any{}},
		"crit naming an absent parameter": {"crit": []any{"x-absent"}},
		"crit as a string":                {"crit": "x-catsrv-ext", "x-catsrv-ext": true},
		"crit null":                       {"crit": nil},
	} {
		tests = append(tests, struct {
			name  string
			token string
		}{name, signWithHeader(t, header)})
		reasons[name] = "unsupported critical header"
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Verify(tt.token)
			if err == nil {
				t.Fatal("accepted")
			}
			if errs.KindOf(err) != errs.KindUnauthorized {
				t.Fatalf("kind = %v, want unauthorized", errs.KindOf(err))
			}
			if msg := errs.PublicMessage(err, ""); !strings.Contains(msg, reasons[tt.name]) {
				t.Fatalf("reason %q, want %q", msg, reasons[tt.name])
			}
		})
	}
	// The controls: the same tokens with every detail right pass.
	for name, tok := range map[string]string{
		"the untampered token":               good,
		"a hand-written payload":             signRaw(t, fmt.Sprintf(`{"sub":"alice","role":"admin","jti":"id-1","iss":%q,"aud":%q,"iat":%d,"nbf":%d,"exp":%d}`, issuer, audience, now.Unix(), now.Unix(), future)),
		"extra header parameters, no crit":   signWithHeader(t, map[string]any{"kid": "k1", "x-catsrv-ext": true}),
		"numeric dates as fractions":         sign(t, jwt.SigningMethodHS256, secret, with(func(c jwt.MapClaims) { c["exp"] = float64(future) + 0.5 })),
		"numeric dates in exponent notation": sign(t, jwt.SigningMethodHS256, secret, with(func(c jwt.MapClaims) { c["iat"] = json.Number("1.7487792e9") })),
	} {
		if _, err := s.Verify(tok); err != nil {
			t.Errorf("%s must pass: %v", name, err)
		}
	}
}

func TestLeewayOnExpiry(t *testing.T) {
	s := service(t)
	tok := sign(t, jwt.SigningMethodHS256, secret, with(func(c jwt.MapClaims) { c["exp"] = now.Add(-tokens.Leeway / 2).Unix() }))
	if _, err := s.Verify(tok); err != nil {
		t.Fatalf("expiry within leeway must pass: %v", err)
	}
}

func TestVerifyBearer(t *testing.T) {
	s := service(t)
	tok, _, err := s.Issue("bob", "user", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, header string
		ok           bool
	}{
		{"bearer", "Bearer " + tok, true},
		{"lower-case scheme", "bearer " + tok, true},
		{"missing", "", false},
		{"basic scheme", "Basic dXNlcjpwYXNz", false},
		{"scheme only", "Bearer", false},
		{"token without scheme", tok, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := s.VerifyBearer(tt.header)
			if tt.ok != (err == nil) {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if tt.ok && c.Subject != "bob" {
				t.Fatalf("subject %q", c.Subject)
			}
			if !tt.ok && errs.KindOf(err) != errs.KindUnauthorized {
				t.Fatalf("kind %v", errs.KindOf(err))
			}
		})
	}
}

func TestShortSecretRefused(t *testing.T) {
	if _, err := tokens.New([]byte("short"), issuer, audience, clock.System{}); err == nil {
		t.Fatal("a short secret must be refused")
	}
}

func TestRequireAdmin(t *testing.T) {
	if err := auth.RequireAdmin(auth.Claims{Role: "user"}); errs.KindOf(err) != errs.KindForbidden {
		t.Fatalf("non-admin: %v", err)
	}
	if err := auth.RequireAdmin(auth.Claims{Role: auth.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
}

func TestSessionIDRoundTrips(t *testing.T) {
	s := service(t)
	cases := []struct{ name, sid string }{{"with a session", "sess-1"}, {"without", ""}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok, issued, err := s.IssueForSession("alice", auth.RoleUser, c.sid, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Verify(tok)
			if err != nil || got.SessionID != c.sid || issued.SessionID != c.sid {
				t.Fatalf("sid %q (issued %q), %v; want %q", got.SessionID, issued.SessionID, err, c.sid)
			}
		})
	}
}

func TestIngestTokenCarriesItsCats(t *testing.T) {
	s := service(t)
	tok, issued, err := s.IssueIngest("feeder", []string{"a", "b"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Verify(tok)
	if err != nil || got.Role != auth.RoleIngest || !slices.Equal(got.Cats, []string{"a", "b"}) || !slices.Equal(issued.Cats, got.Cats) {
		t.Fatalf("verified %+v, %v; issued %+v", got, err, issued)
	}
	for _, cats := range [][]string{nil, {""}, {"a", "a"}} {
		if _, _, err := s.IssueIngest("feeder", cats, time.Hour); errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("IssueIngest(%q) = %v, want an invalid error", cats, err)
		}
	}
	plain, _, err := s.Issue("alice", auth.RoleAdmin, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Verify(plain); err != nil || got.Cats != nil {
		t.Fatalf("an admin token verified as %+v, %v: want no cats", got, err)
	}
}
