package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/markbates/goth"
	"golang.org/x/oauth2"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// Paths of provider_a's endpoints under its base URL.
const (
	providerAAuthorizePath = "/authorize"
	providerATokenPath     = "/token"
)

// maxTokenResponse bounds what is read of a token response.
const maxTokenResponse = 1 << 20

// ProviderA is provider_a as a goth.Provider: an authorization code flow
// with PKCE (S256) against <base>/authorize, and a code exchange by POST to
// <base>/token authenticated with the client id and the API key (the
// client secret). The token response carries the user:
//
//	{"access_token": "...", "token_type": "Bearer", "expires_in": 3600,
//	 "user": {"id": "...", "email": "...", "name": "..."}}
type ProviderA struct {
	ClientID    string
	APIKey      string
	CallbackURL string
	AuthURL     string
	TokenURL    string
	// Scopes, when set, are sent as the scope parameter.
	Scopes     []string
	HTTPClient *http.Client
	name       string
}

var _ goth.Provider = (*ProviderA)(nil)

// NewProviderA returns provider_a. It has no public default endpoints:
// BaseURL is required; ClientSecret is the API key.
func NewProviderA(c Config) (ports.IdentityProvider, error) {
	if err := c.check(auth.ProviderA); err != nil {
		return nil, err
	}
	if c.BaseURL == "" {
		return nil, errs.New(errs.KindInvalid, "%s: base URL missing", auth.ProviderA)
	}
	rw, err := newRewriter(c.BaseURL)
	if err != nil {
		return nil, err
	}
	base := rw.base.String()
	p := &ProviderA{
		ClientID: c.ClientID, APIKey: c.ClientSecret, CallbackURL: c.RedirectURL,
		AuthURL: base + providerAAuthorizePath, TokenURL: base + providerATokenPath, Scopes: c.Scopes,
		HTTPClient: &http.Client{Timeout: callTimeout}, name: auth.ProviderA,
	}
	return &adapter{name: auth.ProviderA, provider: p, rewrite: rw}, nil
}

// Name returns the provider's name.
func (p *ProviderA) Name() string { return p.name }

// SetName renames the provider.
func (p *ProviderA) SetName(name string) { p.name = name }

// Debug is a no-op, for goth.Provider.
func (p *ProviderA) Debug(bool) {}

// BeginAuth starts a login without PKCE.
func (p *ProviderA) BeginAuth(state string) (goth.Session, error) {
	return p.BeginAuthPKCE(state, "")
}

// BeginAuthPKCE starts a login whose code can only be exchanged with
// verifier.
func (p *ProviderA) BeginAuthPKCE(state, verifier string) (goth.Session, error) {
	u, err := url.Parse(p.AuthURL)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	q.Set("client_id", p.ClientID)
	q.Set("redirect_uri", p.CallbackURL)
	q.Set("response_type", "code")
	q.Set("state", state)
	if len(p.Scopes) > 0 {
		q.Set("scope", strings.Join(p.Scopes, " "))
	}
	if verifier != "" {
		sum := sha256.Sum256([]byte(verifier))
		q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(sum[:]))
		q.Set("code_challenge_method", "S256")
	}
	u.RawQuery = q.Encode()
	return &ProviderASession{AuthURL: u.String()}, nil
}

// UnmarshalSession restores a session from Marshal's text.
func (p *ProviderA) UnmarshalSession(data string) (goth.Session, error) {
	s := &ProviderASession{}
	err := json.NewDecoder(strings.NewReader(data)).Decode(s)
	return s, err
}

// FetchUser returns the user the code exchange returned.
func (p *ProviderA) FetchUser(session goth.Session) (goth.User, error) {
	s, ok := session.(*ProviderASession)
	if !ok || s.AccessToken == "" {
		return goth.User{}, errors.New("provider_a: the session is not authorized")
	}
	return goth.User{
		Provider: p.name, UserID: s.UserID, Email: s.Email, Name: s.Name,
		AccessToken: s.AccessToken, RefreshToken: s.RefreshToken, ExpiresAt: s.ExpiresAt,
	}, nil
}

// RefreshTokenAvailable reports false: catsrv keeps its own sessions.
func (p *ProviderA) RefreshTokenAvailable() bool { return false }

// RefreshToken is not supported.
func (p *ProviderA) RefreshToken(string) (*oauth2.Token, error) {
	return nil, errors.New("provider_a: refresh is not supported")
}

// ProviderASession is the goth session of a provider_a login. The
// provider's tokens are left out of Marshal: catsrv keeps its own session
// and never stores the provider's.
type ProviderASession struct {
	AuthURL      string
	AccessToken  string `json:"-"`
	RefreshToken string `json:"-"`
	ExpiresAt    time.Time
	UserID       string
	Email        string
	Name         string
}

// GetAuthURL returns the authorization URL.
func (s *ProviderASession) GetAuthURL() (string, error) {
	if s.AuthURL == "" {
		return "", errors.New(goth.NoAuthUrlErrorMessage)
	}
	return s.AuthURL, nil
}

// Marshal returns the session as JSON.
func (s *ProviderASession) Marshal() string {
	b, _ := json.Marshal(s) // strings and a time always marshal
	return string(b)
}

type providerAToken struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int64  `json:"expires_in"`
	User         struct {
		ID    string `json:"id"`
		Email string `json:"email"`
		Name  string `json:"name"`
	} `json:"user"`
}

// Authorize exchanges the code (params "code", and "code_verifier" when
// the login used PKCE) for the tokens and the user.
func (s *ProviderASession) Authorize(provider goth.Provider, params goth.Params) (string, error) {
	p, ok := provider.(*ProviderA)
	if !ok {
		return "", errors.New("provider_a: foreign provider")
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {params.Get("code")},
		"redirect_uri":  {p.CallbackURL},
		"client_id":     {p.ClientID},
		"client_secret": {p.APIKey},
	}
	if v := params.Get("code_verifier"); v != "" {
		form.Set("code_verifier", v)
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, p.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := p.HTTPClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", &oauth2.RetrieveError{Response: resp, Body: body}
	}
	var tok providerAToken
	if err := json.Unmarshal(body, &tok); err != nil {
		return "", fmt.Errorf("provider_a: token response is not JSON: %w", err)
	}
	if tok.AccessToken == "" {
		return "", errors.New("provider_a: token response without access_token")
	}
	s.AccessToken, s.RefreshToken = tok.AccessToken, tok.RefreshToken
	if tok.ExpiresIn > 0 {
		s.ExpiresAt = time.Now().Add(time.Duration(tok.ExpiresIn) * time.Second)
	}
	s.UserID, s.Email, s.Name = tok.User.ID, tok.User.Email, tok.User.Name
	return s.AccessToken, nil
}
