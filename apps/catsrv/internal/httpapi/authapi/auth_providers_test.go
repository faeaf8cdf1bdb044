package authapi_test

import (
	"net/http"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/ports"
)

func TestProvidersListsOnlyUsableOnes(t *testing.T) {
	withoutC := func(d *authapi.Deps) {
		kept := map[string]ports.IdentityProvider{}
		for name, p := range d.Providers {
			if name != auth.ProviderC {
				kept[name] = p
			}
		}
		d.Providers = kept
	}
	cases := []struct {
		name   string
		query  string
		opts   []AuthOption
		status int
		want   []string
	}{
		{"default CAT, all enabled and configured", "", nil, http.StatusOK, []string{auth.ProviderA, auth.ProviderB, auth.ProviderC}},
		{"unconfigured provider left out", "", []AuthOption{withoutC}, http.StatusOK, []string{auth.ProviderA, auth.ProviderB}},
		{"CAT that disables every provider", "?catname=" + DisabledCat, nil, http.StatusOK, nil},
		{"unknown CAT", "?catname=nope", nil, http.StatusNotFound, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := NewAuthEnv(t, c.opts...).Browser(t)
			r := b.Do(http.MethodGet, AuthPrefix+"/providers"+c.query, "")
			if r.Status != c.status {
				t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Body)
			}
			if c.status != http.StatusOK {
				return
			}
			list, _ := r.JSON(t)["providers"].([]any)
			if len(list) != len(c.want) {
				t.Fatalf("providers %v, want %v", list, c.want)
			}
			for i, entry := range list {
				e, _ := entry.(map[string]any)
				if e["name"] != c.want[i] || e["start_url"] == "" {
					t.Fatalf("entry %d = %v, want %s with a start_url", i, e, c.want[i])
				}
			}
		})
	}
}
