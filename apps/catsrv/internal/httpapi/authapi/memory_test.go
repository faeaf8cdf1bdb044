package authapi_test

import (
	"strings"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/core/auth"
)

// TestMemoryOverHTTP runs the memory routes under the limits newAuthEnv
// sets: 5 keys, 32-byte keys, 100-byte values, 300 bytes in all.
func TestMemoryOverHTTP(t *testing.T) {
	e := NewAuthEnv(t)
	ann, bob := e.Browser(t), e.Browser(t)
	ann.Login(auth.ProviderA)
	bob.Login(auth.ProviderB)
	send := func(b *Browser, method, body string) Reply {
		return b.Do(method, AuthPrefix+"/memory", body, b.SameOrigin()...)
	}
	steps := []struct {
		name   string
		who    *Browser
		method string
		body   string
		status int
		want   string // the body, or a fragment of an error message
	}{
		{"empty at first", ann, "GET", "", 200, `{"preferences":{},"updated_at":null}`},
		{"merge", ann, "POST", `{"preferences":{"lang":"fr","theme":{"dark":true}}}`, 200, `{"preferences":{"lang":"fr","theme":{"dark":true}},"updated_at":"2024-03-15T09:00:00Z"}`},
		{"merge keeps other keys, null removes", ann, "POST", `{"preferences":{"lang":null,"size":  [1, 2]}}`, 200, `{"preferences":{"size":[1,2],"theme":{"dark":true}},"updated_at":"2024-03-15T09:00:00Z"}`},
		{"another user sees nothing", bob, "GET", "", 200, `{"preferences":{},"updated_at":null}`},
		{"invalid JSON", ann, "POST", `{"preferences":{"a":}`, 422, "not valid JSON"},
		{"not an object", ann, "POST", `[1,2]`, 422, `"preferences"`},
		{"preferences not an object", ann, "POST", `{"preferences":"x"}`, 422, `"preferences" must be an object`},
		{"missing preferences", ann, "POST", `{}`, 422, `"preferences" is missing`},
		{"unknown field", ann, "POST", `{"preferences":{},"extra":1}`, 422, `unknown field "extra"`},
		{"empty key", ann, "POST", `{"preferences":{"":1}}`, 422, "must not be empty"},
		{"key too long", ann, "POST", `{"preferences":{"` + strings.Repeat("k", 33) + `":1}}`, 422, "the limit is 32"},
		{"value too large", ann, "POST", `{"preferences":{"v":"` + strings.Repeat("x", 120) + `"}}`, 413, "per value"},
		{"too many keys", ann, "POST", `{"preferences":{"a":1,"b":2,"c":3,"d":4}}`, 422, "limit is 5 keys"},
		{"total too large", ann, "POST", `{"preferences":{"a":"` + strings.Repeat("x", 90) + `","b":"` + strings.Repeat("x", 90) + `","c":"` + strings.Repeat("x", 90) + `"}}`, 413, "in all"},
		{"body far too large", ann, "POST", `{"preferences":{"a":"` + strings.Repeat("x", 10000) + `"}}`, 413, "body larger"},
		{"refusals changed nothing", ann, "GET", "", 200, `{"preferences":{"size":[1,2],"theme":{"dark":true}},"updated_at":"2024-03-15T09:00:00Z"}`},
		{"delete", ann, "DELETE", "", 200, `{"preferences":{},"updated_at":null}`},
		{"deleted", ann, "GET", "", 200, `{"preferences":{},"updated_at":null}`},
		{"delete again", ann, "DELETE", "", 200, `{"preferences":{},"updated_at":null}`},
		{"unauthenticated", e.Browser(t), "GET", "", 401, "authentication required"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			r := send(s.who, s.method, s.body)
			got := strings.TrimSpace(string(r.Body))
			if r.Status != s.status {
				t.Fatalf("%d %s, want %d", r.Status, got, s.status)
			}
			if s.status == 200 && got != s.want {
				t.Fatalf("body %s\nwant %s", got, s.want)
			}
			if s.status != 200 {
				body := r.JSON(t)
				if body["status"] != float64(s.status) || !strings.Contains(body["message"].(string), s.want) {
					t.Fatalf("error body %s, want status %d and a message with %q", got, s.status, s.want)
				}
			}
		})
	}
}
