package authapi_test

import (
	"net/http"
	"strings"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"
)

// TestStrayCookiesKeepTheSession sends the access cookie among cookies
// that are not valid (as browsers do send them: other applications on the
// same host set what they like) to a route of each kind: every route reads
// the session cookie and skips the rest.
func TestStrayCookiesKeepTheSession(t *testing.T) {
	e := NewChatEnv(t)
	tok := strings.TrimPrefix(e.Token(t, "root", "admin"), "Bearer ")
	session := "catsrv_access=" + tok
	routes := map[string]string{
		"analytics": "/api/v1/analytics/all?catname=" + LegacyCat,
		"chat":      ChatPath + "/conversations",
		"auth":      AuthPrefix + "/memory",
	}
	headers := []struct{ name, cookie string }{
		{"the session cookie alone", session},
		{"non-ASCII value before", "lang=français; " + session},
		{"non-ASCII value after", session + "; lang=français"},
		{"emoji value", "cat=🐱; " + session},
		{"non-ASCII name", "язык=ru; " + session},
		{"empty name", "=orphan; " + session},
		{"quoted name", `"q"=1; ` + session},
		{"quote inside the value", `pref=a"b; ` + session},
		{"backslash in the value", `path=a\b; ` + session},
		{"space in the name", "my pref=1; " + session},
		{"missing equals sign", "flag; " + session},
		{"empty pairs and spaces", ";;  ; " + session + " ;"},
		{"comma-joined pairs", "a=1, b=2; " + session},
		{"quoted session value", `catsrv_access="` + tok + `"; lang=français`},
	}
	for route, target := range routes {
		for _, h := range headers {
			t.Run(route+"/"+h.name, func(t *testing.T) {
				r := e.Call(t, http.MethodGet, target, "", nil, "Cookie: "+h.cookie)
				if r.Status != http.StatusOK {
					t.Fatalf("GET %s with Cookie %q: %d %s, want 200", target, h.cookie, r.Status, r.Body)
				}
			})
		}
		t.Run(route+"/stray cookies without the session", func(t *testing.T) {
			if r := e.Call(t, http.MethodGet, target, "", nil, "Cookie: lang=français; =orphan; flag"); r.Status != http.StatusUnauthorized {
				t.Fatalf("GET %s without the session cookie: %d %s, want 401", target, r.Status, r.Body)
			}
		})
	}
}
