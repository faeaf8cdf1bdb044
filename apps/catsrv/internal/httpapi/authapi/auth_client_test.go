package authapi_test

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/client"
	"github.com/catsrv/catsrv/core/auth"
)

// TestGeneratedClientAuth calls the /api/v1/auth routes, which are plain
// handlers documented by hand, through the generated client: each answer
// must decode into the documented type of its status, so the document and
// what is served cannot drift apart unnoticed.
func TestGeneratedClientAuth(t *testing.T) {
	e := NewAuthEnv(t)
	ctx := context.Background()
	b := e.Browser(t)
	if r := b.Login(auth.ProviderA); r.Status != http.StatusSeeOther {
		t.Fatalf("login: status %d", r.Status)
	}
	access, refresh := b.Cookie("catsrv_access", "/"), b.Cookie("catsrv_refresh", AuthPrefix+"/refresh")
	if access == "" || refresh == "" {
		t.Fatal("login set no session cookies")
	}
	// withToken is a client without cookies: the bearer token only.
	withToken := func(token string) *client.ClientWithResponses {
		c, err := client.NewClientWithResponses(e.Srv.URL, client.WithHTTPClient(e.Srv.Client()),
			client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
				if token != "" {
					r.Header.Set("Authorization", "Bearer "+token)
				}
				return nil
			}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	user, anonymous := withToken(access), withToken("")

	t.Run("providers", func(t *testing.T) {
		cat := AuthCat
		r, err := anonymous.AuthProvidersWithResponse(ctx, &client.AuthProvidersParams{Catname: &cat})
		if err != nil || r.JSON200 == nil {
			t.Fatalf("err %v, status %d: %s", err, r.StatusCode(), r.Body)
		}
		var want []client.ProviderEntry
		for _, p := range auth.Providers {
			want = append(want, client.ProviderEntry{Name: p, DisplayName: p, StartUrl: AuthPrefix + "/" + p + "?catname=" + AuthCat})
		}
		if r.JSON200.Catname != AuthCat || !reflect.DeepEqual(r.JSON200.Providers, want) {
			t.Errorf("got %+v, want %s %+v", *r.JSON200, AuthCat, want)
		}
		unknown := "nope"
		r, err = anonymous.AuthProvidersWithResponse(ctx, &client.AuthProvidersParams{Catname: &unknown})
		if err != nil || r.JSON404 == nil || r.JSON404.Status != http.StatusNotFound {
			t.Errorf("unknown CAT: err %v, status %d: %s", err, r.StatusCode(), r.Body)
		}
	})

	t.Run("start", func(t *testing.T) {
		r, err := anonymous.AuthStartProviderBWithResponse(ctx, &client.AuthStartProviderBParams{})
		if err != nil || r.JSON200 == nil || !strings.HasPrefix(r.JSON200.AuthorizationUrl, e.IDPs[auth.ProviderB].Srv.URL) {
			t.Errorf("err %v, status %d: %s", err, r.StatusCode(), r.Body)
		}
	})

	t.Run("memory", func(t *testing.T) {
		got, err := user.AuthGetMemoryWithResponse(ctx)
		if err != nil || got.JSON200 == nil || len(got.JSON200.Preferences) != 0 || got.JSON200.UpdatedAt != nil {
			t.Fatalf("empty memory: err %v, status %d: %s", err, got.StatusCode(), got.Body)
		}
		prefs := map[string]any{"lang": "fr", "theme": map[string]any{"dark": true}}
		set, err := user.AuthUpdateMemoryWithResponse(ctx, client.MemoryUpdate{Preferences: prefs})
		if err != nil || set.JSON200 == nil || !reflect.DeepEqual(set.JSON200.Preferences, prefs) ||
			set.JSON200.UpdatedAt == nil || !set.JSON200.UpdatedAt.Equal(Now) {
			t.Fatalf("update: err %v, status %d: %s", err, set.StatusCode(), set.Body)
		}
		got, err = user.AuthGetMemoryWithResponse(ctx)
		if err != nil || got.JSON200 == nil || !reflect.DeepEqual(*got.JSON200, *set.JSON200) {
			t.Errorf("read back: err %v, status %d: %s", err, got.StatusCode(), got.Body)
		}
		bad, err := user.AuthUpdateMemoryWithBodyWithResponse(ctx, "application/json", strings.NewReader(`{"preferences":1}`))
		if err != nil || bad.JSON422 == nil || bad.JSON422.Error != "VALIDATION_ERROR" {
			t.Errorf("not an object: err %v, status %d: %s", err, bad.StatusCode(), bad.Body)
		}
		big, err := user.AuthUpdateMemoryWithResponse(ctx, client.MemoryUpdate{Preferences: map[string]any{"k": strings.Repeat("x", 200)}})
		if err != nil || big.JSON413 == nil || big.JSON413.Error != "PAYLOAD_TOO_LARGE" {
			t.Errorf("value over its limit: err %v, status %d: %s", err, big.StatusCode(), big.Body)
		}
		del, err := user.AuthDeleteMemoryWithResponse(ctx)
		if err != nil || del.JSON200 == nil || len(del.JSON200.Preferences) != 0 || del.JSON200.UpdatedAt != nil {
			t.Errorf("delete: err %v, status %d: %s", err, del.StatusCode(), del.Body)
		}
		none, err := anonymous.AuthGetMemoryWithResponse(ctx)
		if err != nil || none.JSON401 == nil || none.Headers401 == nil || none.Headers401.WWWAuthenticate == nil {
			t.Errorf("no token: err %v, status %d: %s", err, none.StatusCode(), none.Body)
		}
	})

	t.Run("refresh and logout", func(t *testing.T) {
		s, err := anonymous.AuthRefreshWithResponse(ctx, client.RefreshBody{RefreshToken: refresh})
		if err != nil || s.JSON200 == nil || s.JSON200.TokenType != "Bearer" || s.JSON200.AccessToken == "" {
			t.Fatalf("refresh: err %v, status %d: %s", err, s.StatusCode(), s.Body)
		}
		// The rotated refresh token is only ever in its cookie.
		var rotated string
		for _, c := range s.HTTPResponse.Cookies() {
			if c.Name == "catsrv_refresh" {
				rotated = c.Value
			}
		}
		if rotated == "" || rotated == refresh {
			t.Fatalf("refresh set no new refresh cookie: %v", s.HTTPResponse.Header["Set-Cookie"])
		}
		renewed := withToken(s.JSON200.AccessToken)
		out, err := renewed.AuthLogoutWithResponse(ctx, client.RefreshBody{RefreshToken: rotated})
		if err != nil || out.JSON200 == nil || !out.JSON200.LoggedOut {
			t.Fatalf("logout: err %v, status %d: %s", err, out.StatusCode(), out.Body)
		}
		after, err := renewed.AuthGetMemoryWithResponse(ctx)
		if err != nil || after.JSON401 == nil {
			t.Errorf("memory after logout: err %v, status %d: %s", err, after.StatusCode(), after.Body)
		}
		delAfter, err := user.AuthDeleteMemoryWithResponse(ctx)
		if err != nil || delAfter.JSON401 == nil {
			t.Errorf("delete with the first token of the ended session: err %v, status %d: %s", err, delAfter.StatusCode(), delAfter.Body)
		}
	})
}
