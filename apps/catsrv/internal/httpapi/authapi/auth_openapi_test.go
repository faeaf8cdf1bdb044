package authapi_test

import (
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/core/auth"
)

// authDocument is the part of the served document this test reads.
type authDocument struct {
	Paths map[string]map[string]struct {
		Security  []map[string][]string `json:"security"`
		Responses map[string]struct {
			Headers map[string]struct {
				Description string `json:"description"`
			} `json:"headers"`
			Content map[string]json.RawMessage `json:"content"`
		} `json:"responses"`
	} `json:"paths"`
}

// documentedHeaders are the response headers of the auth routes a client
// acts on; each one a response carries must be in the document for its
// status.
var documentedHeaders = []string{"Set-Cookie", "Location", "Retry-After", "WWW-Authenticate"}

// TestAuthResponsesAreDocumented drives the auth routes through logins,
// refreshes, logouts, the memory, failures and the rate limit, and checks
// every answer against the served OpenAPI document: its status is listed
// for the operation, its content type is the one listed, and each header a
// client acts on (cookies, redirects, retry and auth hints) is documented
// for that status.
func TestAuthResponsesAreDocumented(t *testing.T) {
	e, _ := limitedEnv(t, 1, 12)
	var doc authDocument
	raw := anon(t, e).Do(http.MethodGet, "/openapi.json", "")
	if err := json.Unmarshal(raw.Body, &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	check := func(method, path string, r Reply) {
		t.Helper()
		key := method + " " + path + " " + strconv.Itoa(r.Status)
		seen[key] = true
		op, ok := doc.Paths[path][strings.ToLower(method)]
		if !ok {
			t.Errorf("%s: operation not in the document", key)
			return
		}
		Resp, ok := op.Responses[strconv.Itoa(r.Status)]
		if !ok {
			t.Errorf("%s: status not documented (body %s)", key, r.Body)
			return
		}
		for _, h := range documentedHeaders {
			if _, documented := Resp.Headers[h]; r.Header.Get(h) != "" && !documented {
				t.Errorf("%s: sends %s, which the document does not list", key, h)
			}
		}
		if len(r.Body) > 0 {
			ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if _, documented := Resp.Content[ct]; ct == "application/json" && !documented {
				t.Errorf("%s: answers %s, which the document does not list", key, ct)
			}
		}
	}
	p := auth.ProviderA
	start, callback := AuthPrefix+"/"+p, AuthPrefix+"/"+p+"/callback"

	// A browser login: start (cookie), callback (303, cookies, Location).
	b := e.Browser(t)
	r := b.Do(http.MethodPost, start, "")
	check(http.MethodPost, start, r)
	authURL, _ := r.JSON(t)["authorization_url"].(string)
	r = b.Do(http.MethodGet, b.LoginAtIDP(authURL), "")
	check(http.MethodGet, callback, r)
	// The JSON form of the callback.
	r = b.Login(auth.ProviderB, "Accept", "application/json")
	check(http.MethodGet, AuthPrefix+"/"+auth.ProviderB+"/callback", r)
	// A callback without its state cookie: 400, the state cookie cleared.
	check(http.MethodGet, callback, anon(t, e).Do(http.MethodGet, callback+"?state=x&code=y", ""))
	// Providers, the memory with the session cookie, refresh, logout.
	check(http.MethodGet, AuthPrefix+"/providers", b.Do(http.MethodGet, AuthPrefix+"/providers", ""))
	check(http.MethodGet, AuthPrefix+"/memory", b.Do(http.MethodGet, AuthPrefix+"/memory", ""))
	check(http.MethodPost, AuthPrefix+"/memory", b.Do(http.MethodPost, AuthPrefix+"/memory", `{"preferences":{"a":1}}`, b.SameOrigin()...))
	check(http.MethodPost, AuthPrefix+"/memory", b.Do(http.MethodPost, AuthPrefix+"/memory", `{"preferences":1}`, b.SameOrigin()...))
	check(http.MethodPost, AuthPrefix+"/memory", b.Do(http.MethodPost, AuthPrefix+"/memory", `{"preferences":{"a":1}}`, "Origin", RefusedOrigin))
	check(http.MethodDelete, AuthPrefix+"/memory", b.Do(http.MethodDelete, AuthPrefix+"/memory", "", b.SameOrigin()...))
	check(http.MethodGet, AuthPrefix+"/memory", anon(t, e).Do(http.MethodGet, AuthPrefix+"/memory", ""))
	check(http.MethodPost, AuthPrefix+"/refresh", b.Do(http.MethodPost, AuthPrefix+"/refresh", "", b.SameOrigin()...))
	check(http.MethodPost, AuthPrefix+"/logout", b.Do(http.MethodPost, AuthPrefix+"/logout", "", b.SameOrigin()...))
	// A dead refresh token: 401, the session cookies cleared.
	check(http.MethodPost, AuthPrefix+"/refresh", anon(t, e).Do(http.MethodPost, AuthPrefix+"/refresh", `{"refresh_token":"dead"}`))
	// Over the rate limit: 429 with Retry-After.
	var limited Reply
	for range 30 {
		if limited = anon(t, e).Do(http.MethodPost, AuthPrefix+"/logout", ""); limited.Status == http.StatusTooManyRequests {
			break
		}
	}
	check(http.MethodPost, AuthPrefix+"/logout", limited)

	for _, want := range []string{
		"GET " + callback + " 303", "GET " + AuthPrefix + "/" + auth.ProviderB + "/callback 200", "GET " + callback + " 400",
		"POST " + AuthPrefix + "/refresh 200", "POST " + AuthPrefix + "/refresh 401", "POST " + AuthPrefix + "/logout 200",
		"POST " + AuthPrefix + "/logout 429", "GET " + AuthPrefix + "/memory 401", "POST " + AuthPrefix + "/memory 422",
		"POST " + AuthPrefix + "/memory 403", "POST " + start + " 200",
	} {
		if !seen[want] {
			t.Errorf("the flow did not produce %s: the test lost its reach", want)
		}
	}
}
