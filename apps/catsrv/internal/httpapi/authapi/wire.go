package authapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/session"
)

// This file holds the wire shapes of the /api/v1/auth routes: their
// inputs, the outputs with the cookies they set, and the JSON bodies, with
// their conversions from the core's types.

// The inputs of the auth operations. Cookies are read from the request
// (base.CookieValue), not as huma cookie inputs: huma keeps the last of two
// cookies of one name, net/http the first (browsers send the most specific
// path first). The callback lists its login-state cookie as a cookie
// parameter; the refresh cookie is told of in the body's description (as a
// parameter it would change the generated client's signatures), the access
// cookie by the session_cookie security scheme.
type (
	catQuery struct {
		Cat string `query:"catname" doc:"The CAT whose settings apply; default: the server's default CAT."`
	}
	callbackInput struct {
		Code             string `query:"code" doc:"The authorization code."`
		State            string `query:"state" doc:"The state of the login."`
		Error            string `query:"error" doc:"The provider's error, when it refused the login."`
		ErrorDescription string `query:"error_description" doc:"The provider's description of its error."`
	}
)

// The outputs. Set-Cookie carries the session or login-state cookies.
type (
	startOutput struct {
		SetCookie []http.Cookie `header:"Set-Cookie" doc:"The login-state cookie catsrv_login_<provider> (httpOnly, SameSite=Lax)."`
		Body      StartResponse
	}
	// callbackOutput is a redirect (303, Location, http.Redirect's short
	// HTML) or the session as JSON (200). Body is either already encoded,
	// which huma writes as it is.
	callbackOutput struct {
		Status      int
		Location    string        `header:"Location" hidden:"true"`
		SetCookie   []http.Cookie `header:"Set-Cookie" doc:"The session cookies catsrv_access and catsrv_refresh; the login-state cookie, cleared."`
		ContentType string        `header:"Content-Type" hidden:"true"`
		Body        []byte
	}
	sessionOutput struct {
		SetCookie []http.Cookie `header:"Set-Cookie" doc:"The new session cookies catsrv_access and catsrv_refresh."`
		Body      SessionResponse
	}
	logoutOutput struct {
		SetCookie []http.Cookie `header:"Set-Cookie" doc:"catsrv_access and catsrv_refresh, cleared."`
		Body      LogoutResponse
	}
	providersOutput struct{ Body ProvidersResponse }
	memoryOutput    struct{ Body MemoryResponse }
)

// memoryUpdate is the body of POST /api/v1/auth/memory as the document
// shows it. The handler reads the raw bytes (core/auth/prefs validates
// them), so this type exists for the schema only.
type memoryUpdate struct {
	Preferences map[string]any `json:"preferences" doc:"Keys to set; a key set to null is removed."`
}

// StartResponse is the body of POST /api/v1/auth/<provider>.
type StartResponse struct {
	AuthorizationURL string `json:"authorization_url"`
}

// SessionResponse is the JSON body of a successful callback (when the
// client asks for JSON) and of a refresh. The refresh token is never in a
// body: it stays in its httpOnly cookie.
type SessionResponse struct {
	AccessToken string    `json:"access_token"`
	TokenType   string    `json:"token_type"`
	ExpiresAt   time.Time `json:"expires_at"`
	ExpiresIn   int       `json:"expires_in"`
	User        *UserBody `json:"user,omitempty"`
}

// UserBody describes the signed-in user.
type UserBody struct {
	ID       string `json:"id"`
	Provider string `json:"provider"`
	Email    string `json:"email"`
	Name     string `json:"name"`
	Role     string `json:"role"`
}

func sessionBody(s session.Session, withUser bool) SessionResponse {
	out := SessionResponse{
		AccessToken: s.AccessToken, TokenType: "Bearer", ExpiresAt: s.Access.ExpiresAt,
		ExpiresIn: int(s.Access.ExpiresAt.Sub(s.Access.IssuedAt) / time.Second),
	}
	if withUser {
		out.User = &UserBody{ID: s.User.ID, Provider: s.User.Provider, Email: s.User.Email, Name: s.User.Name, Role: s.User.Role}
	}
	return out
}

// ProviderEntry is one identity provider a sign-in page may offer.
type ProviderEntry struct {
	Name string `json:"name"`
	// DisplayName is the sign-in button's label: the name of the three
	// providers, CATSRV_PROVIDER_<NAME>_DISPLAY_NAME of a generic one.
	DisplayName string `json:"display_name"`
	StartURL    string `json:"start_url"`
}

// ProvidersResponse is the body of GET /api/v1/auth/providers.
type ProvidersResponse struct {
	Cat       string          `json:"catname"`
	Providers []ProviderEntry `json:"providers" nullable:"false"`
}

// refreshBody is the optional body of refresh and logout, for clients that
// hold the refresh token themselves instead of the cookie.
type refreshBody struct {
	RefreshToken string `json:"refresh_token"`
}

// LogoutResponse is the body of POST /api/v1/auth/logout.
type LogoutResponse struct {
	LoggedOut bool `json:"logged_out"`
}

// MemoryResponse is the body of every /memory answer (spec §2.5): the
// caller's preferences and when they last changed (null when never).
type MemoryResponse struct {
	Preferences map[string]json.RawMessage `json:"preferences"`
	UpdatedAt   *time.Time                 `json:"updated_at"`
}

func memoryBody(m auth.Memory) MemoryResponse {
	out := MemoryResponse{Preferences: m.Preferences}
	if out.Preferences == nil {
		out.Preferences = map[string]json.RawMessage{}
	}
	if !m.UpdatedAt.IsZero() {
		t := m.UpdatedAt.UTC()
		out.UpdatedAt = &t
	}
	return out
}
