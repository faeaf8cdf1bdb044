package httpapi

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/catconfig/overlay"
	"github.com/catsrv/catsrv/core/errs"
)

// Secret presence as GET /config reports it: whether a secret is
// configured, never its value.
const (
	secretSet   = "set"
	secretUnset = "unset"
)

// ConfigResponse is a CAT's effective configuration: the files with the
// runtime changes applied. Secrets live only in the environment; Secrets
// says which are set.
type ConfigResponse struct {
	Name     string             `json:"name" doc:"CAT name."`
	Cat      catconfig.Chat     `json:"cat"`
	Security catconfig.Security `json:"security"`
	Secrets  map[string]string  `json:"secrets" doc:"Each secret of the environment the CAT uses: set or unset."`
}

type configInput struct {
	CatParam
}

type syncInput struct {
	CatParam
	Body overlay.Override
}

// registerConfig adds GET /config and POST /config/sync.
func registerConfig(api huma.API, c *chatAPI) {
	op := func(id, method, path, summary, desc string, statuses ...int) huma.Operation {
		return huma.Operation{
			OperationID: id, Method: method, Path: ChatPrefix + path, Summary: summary,
			Description: desc + " Needs role admin.", Tags: []string{tagConfig}, Security: chatSecurity,
			Responses: chatErrorResponses(api, append([]int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
				http.StatusUnprocessableEntity, http.StatusInternalServerError, http.StatusServiceUnavailable}, statuses...)...),
			Middlewares: chatMiddlewares(),
		}
	}
	huma.Register(api, op("getConfig", http.MethodGet, "/config", "Get a CAT's configuration",
		"The CAT's effective configuration: its files with the runtime changes applied, secrets reported only as set or unset."), c.getConfig)
	huma.Register(api, op("syncConfig", http.MethodPost, "/config/sync", "Change a CAT's configuration at run time",
		"Merges the keys given into the CAT's runtime changes, validates the result (422 naming the first bad key), "+
			"persists it and applies it to every request that starts afterwards. Returns the new effective configuration."), c.syncConfig)
}

// admin authenticates an admin for the configuration of a CAT.
func (c *chatAPI) admin(ctx context.Context, cat string) (string, error) {
	who, err := c.authenticate(ctx, cat)
	if err != nil {
		return "", err
	}
	if err := auth.RequireAdmin(who.claims); err != nil {
		return "", err
	}
	if c.d.Config == nil {
		return "", errs.New(errs.KindUnavailable, "runtime configuration is not configured on this server")
	}
	return who.owner.Cat, nil
}

func (c *chatAPI) getConfig(ctx context.Context, in *configInput) (*body[ConfigResponse], error) {
	name, err := c.admin(ctx, in.Cat)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	cfg, err := c.d.Config.Cat(ctx, name)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	return &body[ConfigResponse]{Body: c.configBody(cfg)}, nil
}

func (c *chatAPI) syncConfig(ctx context.Context, in *syncInput) (*body[ConfigResponse], error) {
	name, err := c.admin(ctx, in.Cat)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	cfg, err := c.d.Config.Sync(ctx, name, in.Body)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	c.log.LogAttrs(ctx, slog.LevelInfo, "runtime configuration changed", slog.String("cat", name))
	return &body[ConfigResponse]{Body: c.configBody(cfg)}, nil
}

func (c *chatAPI) configBody(cfg catconfig.Cat) ConfigResponse {
	key := secretUnset
	if c.d.AgentKeySet != nil && c.d.AgentKeySet(cfg.Name) {
		key = secretSet
	}
	out := ConfigResponse{Name: cfg.Name, Cat: cfg.Chat, Security: cfg.Security, Secrets: map[string]string{"agent_api_key": key}}
	out.Cat.Legacy.Models = nonNil(out.Cat.Legacy.Models)
	out.Cat.Custom.Rules = nonNil(out.Cat.Custom.Rules)
	out.Security.CORS.AllowedOrigins = nonNil(out.Security.CORS.AllowedOrigins)
	return out
}
