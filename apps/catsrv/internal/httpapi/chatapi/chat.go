// Package chatapi is the chat part of catsrv's HTTP app: the routes under
// /api/v1/cat (chat, optionally streamed, the caller's conversations and a
// CAT's runtime configuration) and their wire models.
package chatapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/prefs"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/catconfig/overlay"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/chat/service"
	"github.com/catsrv/catsrv/core/errs"
)

// Prefix is the path every chat, conversation and configuration route
// starts with.
const Prefix = "/api/v1/cat"

// tagChat, tagConversations and tagConfig group the /api/v1/cat operations.
const (
	tagChat          = "chat"
	tagConversations = "conversations"
	tagConfig        = "configuration"
)

// Deps are what the /api/v1/cat routes need; without Service they answer
// 503. Callers authenticate as on every route (base.Authenticate: with
// sessions, revocations checked; without, a token alone).
type Deps struct {
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
	// Logger receives the causes of internal errors; nil means
	// slog.Default().
	Logger *slog.Logger
}

// chatAPI serves the /api/v1/cat routes.
type chatAPI struct {
	d   Deps
	log *slog.Logger
}

// Register adds the chat, conversation and configuration routes and their
// tags to api.
func Register(api huma.API, d Deps) {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	api.OpenAPI().Tags = append(api.OpenAPI().Tags,
		&huma.Tag{Name: tagChat, Description: "Chat messages, answered by the legacy pipeline or the agent model, optionally streamed."},
		&huma.Tag{Name: tagConversations, Description: "The caller's conversations: list, read, rename, delete, search."},
		&huma.Tag{Name: tagConfig, Description: "A CAT's effective configuration and its runtime changes (admin)."},
	)
	c := &chatAPI{d: d, log: log}
	g := huma.NewGroup(api, Prefix)
	g.UseMiddleware(base.WithRequest, base.Authenticate)
	registerChat(g, c)
	registerConversations(huma.NewGroup(g, "/conversations"), c)
	registerAdmin(g, c)
	registerConfig(g, c)
	registerApprovals(g, c)
}

// caller is an authenticated request: who asks, of which CAT.
type caller struct {
	claims auth.Claims
	owner  chat.Owner
}

// authenticate returns the caller of a request, as the base.Authenticate
// middleware found them (a bearer token, else the session cookie with the
// origin check for POST, PUT and DELETE; revoked tokens refused), and the
// CAT they ask about.
func (c *chatAPI) authenticate(ctx context.Context, catName string) (caller, error) {
	if c.d.Service == nil {
		return caller{}, errs.New(errs.KindUnavailable, "chat is not configured on this server")
	}
	claims, err := base.CallerOf(ctx)
	if err != nil {
		return caller{}, err
	}
	if catName == "" {
		catName = c.d.DefaultCat
	}
	if catName == "" {
		return caller{}, errs.New(errs.KindInvalid, "catname: no default CAT on this server, name one with ?catname=")
	}
	// A name no CAT can have (a NUL byte, say) is the caller's mistake,
	// refused here rather than by the store.
	if !catconfig.ValidName(catName) {
		return caller{}, errs.New(errs.KindInvalid, "catname: %q is not a CAT name (1 to 64 of a-z, 0-9, - and _)", catName)
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

// chatErrorBody answers err by the chat table, except that a model service
// that failed is a bad gateway (502) and one that did not answer in time a
// gateway time-out (504); a model that is not configured stays 503.
func chatErrorBody(ctx context.Context, log *slog.Logger, err error) base.ErrorBody {
	switch {
	case errors.Is(err, chat.ErrUpstreamTimeout):
		log.LogAttrs(ctx, slog.LevelWarn, "model service timed out", slog.String("error", err.Error()))
		return base.ErrorBody{Code: "UPSTREAM_TIMEOUT", Status: http.StatusGatewayTimeout, Message: errs.PublicMessage(err, "the model service did not answer in time")}
	case errors.Is(err, chat.ErrUpstreamFailed):
		log.LogAttrs(ctx, slog.LevelWarn, "model service failed", slog.String("error", err.Error()))
		return base.ErrorBody{Code: "UPSTREAM_FAILED", Status: http.StatusBadGateway, Message: errs.PublicMessage(err, "the model service failed")}
	}
	return base.ErrorBodyFor(ctx, log, err, base.ChatKinds)
}

// chatError is chatErrorBody as an error huma writes.
func chatError(ctx context.Context, log *slog.Logger, err error) error {
	body := chatErrorBody(ctx, log, err)
	return base.NewError(body, base.FailureHeaders(err, body.Status))
}
