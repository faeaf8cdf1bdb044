package chatapi

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
)

// Secret presence as GET /config reports it: whether a secret is
// configured, never its value.
const (
	secretSet   = "set"
	secretUnset = "unset"
)

// registerConfig adds GET /config and POST /config/sync.
func registerConfig(api huma.API, c *chatAPI) {
	op := func(id, method, path, summary, desc string, statuses ...int) huma.Operation {
		return huma.Operation{
			OperationID: id, Method: method, Path: path, Summary: summary,
			Description: desc + " Needs role admin.", Tags: []string{tagConfig}, Security: security,
			Responses: errorResponses(api, append([]int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
				http.StatusUnprocessableEntity, http.StatusInternalServerError, http.StatusServiceUnavailable}, statuses...)...),
		}
	}
	huma.Register(api, op("getConfig", http.MethodGet, "/config", "Get a CAT's configuration",
		"The CAT's effective configuration: its files with the runtime changes applied, secrets reported only as set or unset."), c.getConfig)
	huma.Register(api, op("syncConfig", http.MethodPost, "/config/sync", "Change a CAT's configuration at run time",
		"Merges the keys given into the CAT's runtime changes, validates the result (422 naming the first bad key), "+
			"persists it and applies it to every request that starts afterwards: on this instance at once, on every other instance "+
			"sharing the database within a second. Changes of different keys made on several instances at once are all kept. "+
			"Returns the new effective configuration."), c.syncConfig)
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

func (c *chatAPI) getConfig(ctx context.Context, in *configInput) (*base.Body[ConfigResponse], error) {
	name, err := c.admin(ctx, in.Cat)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	cfg, err := c.d.Config.Cat(ctx, name)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	return &base.Body[ConfigResponse]{Body: c.configBody(cfg)}, nil
}

func (c *chatAPI) syncConfig(ctx context.Context, in *syncInput) (*base.Body[ConfigResponse], error) {
	name, err := c.admin(ctx, in.Cat)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	cfg, err := c.d.Config.Sync(ctx, name, in.Body.override())
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	c.log.LogAttrs(ctx, slog.LevelInfo, "runtime configuration changed", slog.String("cat", name))
	return &base.Body[ConfigResponse]{Body: c.configBody(cfg)}, nil
}

func (c *chatAPI) configBody(cfg catconfig.Cat) ConfigResponse {
	key := secretUnset
	if c.d.AgentKeySet != nil && c.d.AgentKeySet(cfg.Name) {
		key = secretSet
	}
	out := ConfigResponse{Name: cfg.Name, Cat: cfg.Chat, Security: cfg.Security, Secrets: map[string]string{"agent_api_key": key}}
	out.Cat.Legacy.Models = base.NonNil(out.Cat.Legacy.Models)
	out.Cat.Custom.Rules = base.NonNil(out.Cat.Custom.Rules)
	out.Cat.Agent.Tools = base.NonNil(out.Cat.Agent.Tools)
	out.Cat.Agent.MCPServers = base.NonNil(out.Cat.Agent.MCPServers)
	out.Security.CORS.AllowedOrigins = base.NonNil(out.Security.CORS.AllowedOrigins)
	return out
}
