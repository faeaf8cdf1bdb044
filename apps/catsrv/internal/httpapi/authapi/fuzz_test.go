package authapi_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/privacy"
)

// FuzzEraseUser sends any user reference, as an admin, to the erasure
// route and to the admin's conversation deletion, over SQLite (and
// PostgreSQL when the seed corpus runs with CATSRV_TEST_POSTGRES_DSN): no
// answer is a server failure, nothing is logged at ERROR, a reference no
// store could hold is refused (400, 422), and the env's user keeps her
// conversation unless she is the one named.
func FuzzEraseUser(f *testing.F) {
	for _, ref := range []string{"alice2", "provider_a:x", "provider_b:", "provider_z:1", "a\x00b", "caf\xc3", "\xff",
		"%00", "' OR 1=1 --", "é", "u_0123456789abcdef", strings.Repeat("x", 600), ":", "provider_a:\x00"} {
		f.Add(ref)
	}
	envs := FuzzEnvs(f)
	f.Fuzz(func(t *testing.T, ref string) {
		routed := ref != "" && ref != "." && ref != ".." && !strings.Contains(ref, "/")
		for _, e := range envs {
			if ref == "alice" {
				return // the env's user: erasing her is the ordinary case
			}
			erase := e.Do(t, http.MethodDelete, AuthPrefix+"/users/"+url.PathEscape(ref), e.Admin, "")
			e.CheckFuzz(t, "erase "+ref, erase)
			conv := e.Do(t, http.MethodDelete, ChatPath+"/users/"+url.PathEscape(ref)+"/conversations/"+url.PathEscape(e.Conv)+"?catname="+LegacyCat, e.Admin, "")
			e.CheckFuzz(t, "delete conversation of "+ref, conv)
			if !routed {
				continue
			}
			p, sub, named := strings.Cut(ref, ":")
			bad := privacy.CheckUser(ref) != nil || len([]rune(ref)) > 512 || (named && sub == "" && slices.Contains(auth.Providers, p))
			switch {
			case bad && erase.Status != http.StatusBadRequest && erase.Status != http.StatusUnprocessableEntity:
				t.Errorf("%s: erase %q: %d %s, want a refusal", e.Name, ref, erase.Status, erase.Body)
			case !bad && erase.Status != http.StatusNoContent && erase.Status != http.StatusNotFound:
				t.Errorf("%s: erase %q: %d %s, want 204 or 404", e.Name, ref, erase.Status, erase.Body)
			}
			if conv.Status != http.StatusNotFound && conv.Status != http.StatusUnprocessableEntity {
				t.Errorf("%s: delete alice's conversation as %q's: %d %s, want 404 or 422", e.Name, ref, conv.Status, conv.Body)
			}
			if r := e.Do(t, http.MethodGet, ChatPath+"/conversations/"+url.PathEscape(e.Conv), e.User, ""); r.Status != http.StatusOK {
				t.Fatalf("%s: after erasing %q, alice's conversation answers %d", e.Name, ref, r.Status)
			}
		}
	})
}
