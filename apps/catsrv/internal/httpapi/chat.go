package httpapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/prefs"
	"github.com/catsrv/catsrv/core/catconfig/overlay"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/chat/service"
	"github.com/catsrv/catsrv/core/errs"
)

// ChatPrefix is the path every chat, conversation and configuration route
// starts with.
const ChatPrefix = "/api/v1/cat"

// tagChat, tagConversations and tagConfig group the /api/v1/cat operations.
const (
	tagChat          = "chat"
	tagConversations = "conversations"
	tagConfig        = "configuration"
)

// ChatDeps are what the /api/v1/cat routes need. Callers authenticate as
// on every route (the authenticate middleware: with Deps.Auth, revocations
// checked; without, a token of Deps.Tokens alone).
type ChatDeps struct {
	Service *service.Service
	// Config serves GET /config and POST /config/sync; it must be the
	// directory the service reads, so a change reaches the next chat.
	Config *overlay.Directory
	// Memory gives the caller's "persona" preference; nil: none.
	Memory *prefs.Service
	// DefaultCat is the CAT of a request without ?catname=.
	DefaultCat string
	// AgentKeySet reports whether an agent API key is configured for a
	// CAT (the key itself never leaves the environment); nil: never.
	AgentKeySet func(cat string) bool
}

// chatAPI serves the /api/v1/cat routes.
type chatAPI struct {
	d   *ChatDeps
	log *slog.Logger
}

// requestKey carries the *http.Request from the middleware to handlers
// that need more of it than huma's inputs (authentication by cookie with
// its CSRF check, the SSE handlers' own responses).
type requestKey struct{}

// responseKey carries the http.ResponseWriter the same way.
type responseKey struct{}

// withRequest stashes the request and the response writer, and marks every
// answer uncacheable: they carry personal data. The chat and auth routes
// list it first.
func withRequest(ctx huma.Context, next func(huma.Context)) {
	r, w := humago.Unwrap(ctx)
	ctx.SetHeader("Cache-Control", "no-store")
	ctx = huma.WithValue(ctx, requestKey{}, r)
	next(huma.WithValue(ctx, responseKey{}, w))
}

// CatParam names the CAT of a chat or conversation request.
type CatParam struct {
	Cat string `query:"catname" maxLength:"64" doc:"CAT name; the server's default CAT when omitted."`
}

// caller is an authenticated request: who asks, of which CAT.
type caller struct {
	claims auth.Claims
	owner  chat.Owner
}

// chatMiddlewares are the middlewares of every /api/v1/cat operation.
func chatMiddlewares() huma.Middlewares { return huma.Middlewares{withRequest, authenticate} }

// authenticate returns the caller of a request, as the authenticate
// middleware found them (a bearer token, else the session cookie with the
// origin check for POST, PUT and DELETE; revoked tokens refused), and the
// CAT they ask about.
func (c *chatAPI) authenticate(ctx context.Context, catName string) (caller, error) {
	if c.d == nil || c.d.Service == nil {
		return caller{}, errs.New(errs.KindUnavailable, "chat is not configured on this server")
	}
	claims, err := callerOf(ctx)
	if err != nil {
		return caller{}, err
	}
	if catName == "" {
		catName = c.d.DefaultCat
	}
	if catName == "" {
		return caller{}, errs.New(errs.KindInvalid, "catname: no default CAT on this server, name one with ?catname=")
	}
	return caller{claims: claims, owner: chat.Owner{Cat: catName, UserID: claims.Subject}}, nil
}

// persona reads the caller's "persona" preference. A memory that cannot
// be read costs the interaction its persona, not the user their answer.
func (c *chatAPI) persona(ctx context.Context, userID string) string {
	if c.d.Memory == nil {
		return ""
	}
	m, err := c.d.Memory.Get(ctx, userID)
	if err != nil {
		c.log.LogAttrs(ctx, slog.LevelWarn, "cannot read the user's memory for the persona", slog.String("error", err.Error()))
		return ""
	}
	var p string
	if raw, ok := m.Preferences["persona"]; ok && json.Unmarshal(raw, &p) == nil {
		return strings.TrimSpace(p)
	}
	return ""
}

// fail turns a core error into the response of the chat error table.
func (c *chatAPI) fail(ctx context.Context, err error) error { return chatError(ctx, c.log, err) }

// newChatAPI builds the chat routes' server over the shared one.
func newChatAPI(d *ChatDeps, s *server) *chatAPI {
	return &chatAPI{d: d, log: s.log}
}
