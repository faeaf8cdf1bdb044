package httpapi_test

import (
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"testing"

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
	raw := anon(t, e).do(http.MethodGet, "/openapi.json", "")
	if err := json.Unmarshal(raw.body, &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	check := func(method, path string, r reply) {
		t.Helper()
		key := method + " " + path + " " + strconv.Itoa(r.status)
		seen[key] = true
		op, ok := doc.Paths[path][strings.ToLower(method)]
		if !ok {
			t.Errorf("%s: operation not in the document", key)
			return
		}
		resp, ok := op.Responses[strconv.Itoa(r.status)]
		if !ok {
			t.Errorf("%s: status not documented (body %s)", key, r.body)
			return
		}
		for _, h := range documentedHeaders {
			if _, documented := resp.Headers[h]; r.header.Get(h) != "" && !documented {
				t.Errorf("%s: sends %s, which the document does not list", key, h)
			}
		}
		if len(r.body) > 0 {
			ct, _, _ := mime.ParseMediaType(r.header.Get("Content-Type"))
			if _, documented := resp.Content[ct]; ct == "application/json" && !documented {
				t.Errorf("%s: answers %s, which the document does not list", key, ct)
			}
		}
	}
	p := auth.ProviderA
	start, callback := authPrefix+"/"+p, authPrefix+"/"+p+"/callback"

	// A browser login: start (cookie), callback (303, cookies, Location).
	b := e.browser(t)
	r := b.do(http.MethodPost, start, "")
	check(http.MethodPost, start, r)
	authURL, _ := r.json(t)["authorization_url"].(string)
	r = b.do(http.MethodGet, b.loginAtIDP(authURL), "")
	check(http.MethodGet, callback, r)
	// The JSON form of the callback.
	r = b.login(auth.ProviderB, "Accept", "application/json")
	check(http.MethodGet, authPrefix+"/"+auth.ProviderB+"/callback", r)
	// A callback without its state cookie: 400, the state cookie cleared.
	check(http.MethodGet, callback, anon(t, e).do(http.MethodGet, callback+"?state=x&code=y", ""))
	// Providers, the memory with the session cookie, refresh, logout.
	check(http.MethodGet, authPrefix+"/providers", b.do(http.MethodGet, authPrefix+"/providers", ""))
	check(http.MethodGet, authPrefix+"/memory", b.do(http.MethodGet, authPrefix+"/memory", ""))
	check(http.MethodPost, authPrefix+"/memory", b.do(http.MethodPost, authPrefix+"/memory", `{"preferences":{"a":1}}`, b.sameOrigin()...))
	check(http.MethodPost, authPrefix+"/memory", b.do(http.MethodPost, authPrefix+"/memory", `{"preferences":1}`, b.sameOrigin()...))
	check(http.MethodPost, authPrefix+"/memory", b.do(http.MethodPost, authPrefix+"/memory", `{"preferences":{"a":1}}`, "Origin", refusedOrigin))
	check(http.MethodDelete, authPrefix+"/memory", b.do(http.MethodDelete, authPrefix+"/memory", "", b.sameOrigin()...))
	check(http.MethodGet, authPrefix+"/memory", anon(t, e).do(http.MethodGet, authPrefix+"/memory", ""))
	check(http.MethodPost, authPrefix+"/refresh", b.do(http.MethodPost, authPrefix+"/refresh", "", b.sameOrigin()...))
	check(http.MethodPost, authPrefix+"/logout", b.do(http.MethodPost, authPrefix+"/logout", "", b.sameOrigin()...))
	// A dead refresh token: 401, the session cookies cleared.
	check(http.MethodPost, authPrefix+"/refresh", anon(t, e).do(http.MethodPost, authPrefix+"/refresh", `{"refresh_token":"dead"}`))
	// Over the rate limit: 429 with Retry-After.
	var limited reply
	for range 30 {
		if limited = anon(t, e).do(http.MethodPost, authPrefix+"/logout", ""); limited.status == http.StatusTooManyRequests {
			break
		}
	}
	check(http.MethodPost, authPrefix+"/logout", limited)

	for _, want := range []string{
		"GET " + callback + " 303", "GET " + authPrefix + "/" + auth.ProviderB + "/callback 200", "GET " + callback + " 400",
		"POST " + authPrefix + "/refresh 200", "POST " + authPrefix + "/refresh 401", "POST " + authPrefix + "/logout 200",
		"POST " + authPrefix + "/logout 429", "GET " + authPrefix + "/memory 401", "POST " + authPrefix + "/memory 422",
		"POST " + authPrefix + "/memory 403", "POST " + start + " 200",
	} {
		if !seen[want] {
			t.Errorf("the flow did not produce %s: the test lost its reach", want)
		}
	}
}
