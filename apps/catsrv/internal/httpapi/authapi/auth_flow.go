package authapi

import (
	"bytes"
	"context"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
)

// maxProviderError bounds how much of a provider's error parameter is
// echoed and audited.
const maxProviderError = 200

// start begins a login: it checks the provider is enabled for the CAT and
// configured on the server, seals the state into a cookie and returns the
// provider's authorization URL.
func (a *authAPI) start(ctx context.Context, in *catQuery, provider string) (*startOutput, error) {
	r, err := base.RequestOf(ctx)
	if err != nil {
		return nil, a.authError(ctx, err)
	}
	m := meta(r)
	cat, err := a.cat(ctx, in.Cat)
	if err != nil {
		return nil, a.authError(ctx, err)
	}
	if err := a.usable(ctx, m, cat.Name, provider, providerEnabled(cat, provider)); err != nil {
		return nil, a.authError(ctx, err)
	}
	fs, sealed, err := a.d.States.Begin(provider, cat.Name)
	if err != nil {
		return nil, a.authError(ctx, err)
	}
	authURL, err := a.d.Providers[provider].AuthURL(ctx, fs.State, fs.Verifier, fs.Nonce)
	if err != nil {
		// An unreachable or misconfigured provider (its discovery, say) is
		// audited, with the reason.
		a.log.LogAttrs(ctx, slog.LevelWarn, "login start failed", slog.String("provider", provider), slog.String("error", err.Error()))
		if aerr := a.d.Sessions.Audit(ctx, auth.AuditEvent{Kind: auth.AuditLoginFailure, Provider: provider, Cat: cat.Name,
			IP: m.IP, UserAgent: m.UserAgent, Reason: errs.PublicMessage(err, "internal error")}); aerr != nil {
			err = aerr
		}
		return nil, a.authError(ctx, err)
	}
	if err := a.d.Sessions.Audit(ctx, auth.AuditEvent{Kind: auth.AuditLoginStart, Provider: provider, Cat: cat.Name, IP: m.IP, UserAgent: m.UserAgent}); err != nil {
		return nil, a.authError(ctx, err)
	}
	return &startOutput{SetCookie: []http.Cookie{a.d.Cookies.state(provider, sealed)}, Body: StartResponse{AuthorizationURL: authURL}}, nil
}

// usable refuses a provider that the CAT disables or that the server has
// no credentials for, auditing the refusal.
func (a *authAPI) usable(ctx context.Context, m auth.RequestMeta, cat, provider string, enabled bool) error {
	var refusal error
	switch {
	case !enabled:
		refusal = errs.New(errs.KindForbidden, "%s is disabled for CAT %s (security.providers.%s.enabled is false)", provider, cat, provider)
	case a.d.Providers[provider] == nil:
		refusal = errs.New(errs.KindUnavailable, "%s is not configured on this server: its credentials are not set (see docs/auth.md)", provider)
	default:
		return nil
	}
	if err := a.d.Sessions.Audit(ctx, auth.AuditEvent{Kind: auth.AuditProviderDisabled, Provider: provider, Cat: cat,
		IP: m.IP, UserAgent: m.UserAgent, Reason: errs.PublicMessage(refusal, "")}); err != nil {
		return err
	}
	return refusal
}

// callback finishes a login: state check (cookie, match, expiry, replay),
// code exchange, user upsert, session cookies, then a redirect to the
// post-login URL or, when the client asks for JSON, the session.
func (a *authAPI) callback(ctx context.Context, in *callbackInput, provider string) (*callbackOutput, error) {
	r, err := base.RequestOf(ctx)
	if err != nil {
		return nil, a.authError(ctx, err)
	}
	m := meta(r)
	failed := func(cat string, err error) error {
		// The cause (a provider's answer, say) is for operators only.
		a.log.LogAttrs(ctx, slog.LevelWarn, "login failed", slog.String("provider", provider), slog.String("error", err.Error()))
		if aerr := a.d.Sessions.Audit(ctx, auth.AuditEvent{Kind: auth.AuditLoginFailure, Provider: provider, Cat: cat,
			IP: m.IP, UserAgent: m.UserAgent, Reason: errs.PublicMessage(err, "internal error")}); aerr != nil {
			err = aerr
		}
		return a.authError(ctx, err, a.d.Cookies.clearedState(provider))
	}
	fs, err := a.d.States.Open(base.CookieValue(r, stateCookiePrefix+provider), provider, in.State)
	if err != nil {
		return nil, failed("", err)
	}
	if in.Error != "" {
		return nil, failed(fs.Cat, errs.New(errs.KindUnauthorized, "the identity provider refused the login: %s", clip(in.Error+" "+in.ErrorDescription)))
	}
	if err := a.d.Sessions.ClaimState(ctx, fs); err != nil {
		return nil, failed(fs.Cat, err)
	}
	cat, err := a.d.Cats.Cat(ctx, fs.Cat)
	if err != nil {
		return nil, failed(fs.Cat, err)
	}
	if err := a.usable(ctx, m, cat.Name, provider, providerEnabled(cat, provider)); err != nil {
		return nil, failed(fs.Cat, err)
	}
	id, err := a.d.Providers[provider].Exchange(ctx, in.Code, fs.Verifier, fs.Nonce)
	if err != nil {
		return nil, failed(fs.Cat, err)
	}
	s, err := a.d.Sessions.Login(ctx, fs.Cat, id, m)
	if err != nil {
		return nil, failed(fs.Cat, err)
	}
	out := &callbackOutput{SetCookie: append([]http.Cookie{a.d.Cookies.clearedState(provider)}, a.d.Cookies.session(s, s.Access.IssuedAt)...)}
	if wantsJSON(r) {
		body, err := base.JSONLine(sessionBody(s, true))
		if err != nil {
			return nil, a.authError(ctx, err)
		}
		out.Status, out.ContentType, out.Body = http.StatusOK, "application/json", body
		return out, nil
	}
	redirect := redirectTo(r, a.d.PostLoginURL)
	out.Status, out.Location, out.ContentType, out.Body = http.StatusSeeOther, redirect.Header().Get("Location"),
		redirect.Header().Get("Content-Type"), redirect.body.Bytes()
	return out, nil
}

// redirectTo is the 303 answer http.Redirect gives r for target: the
// Location (a relative target resolved against the request's path,
// cleaned) and the short HTML body of a GET.
func redirectTo(r *http.Request, target string) *captured {
	w := &captured{header: http.Header{}}
	http.Redirect(w, r, target, http.StatusSeeOther)
	return w
}

// captured is a ResponseWriter that keeps the headers and body written.
type captured struct {
	header http.Header
	body   bytes.Buffer
}

func (c *captured) Header() http.Header         { return c.header }
func (c *captured) Write(b []byte) (int, error) { return c.body.Write(b) }
func (*captured) WriteHeader(int)               {}

// wantsJSON reports whether the client prefers JSON to HTML: an Accept
// header naming application/json and not text/html (what a browser's
// navigation sends).
func wantsJSON(r *http.Request) bool {
	accept := r.Header.Get("Accept")
	jsonOK, htmlOK := false, false
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		jsonOK = jsonOK || mt == "application/json"
		htmlOK = htmlOK || mt == "text/html"
	}
	return jsonOK && !htmlOK
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxProviderError {
		return cutText(s, maxProviderError) + "..."
	}
	return s
}
