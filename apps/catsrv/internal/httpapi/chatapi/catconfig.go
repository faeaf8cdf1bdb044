package chatapi

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
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
	Body Override
}

// Override is the body of POST /config/sync: a change of the runtime keys;
// an absent key is left as it is. The JSON names are those of the cat.*
// keys.
type Override struct {
	ChatMode *string         `json:"chat_mode,omitempty" doc:"cat.chat_mode: legacy, agent or custom."`
	Agent    *AgentOverride  `json:"agent,omitempty"`
	Legacy   *LegacyOverride `json:"legacy,omitempty"`
	Custom   *CustomOverride `json:"custom,omitempty"`
}

// AgentOverride changes cat.agent.* keys.
type AgentOverride struct {
	Model          *string  `json:"model,omitempty" doc:"cat.agent.model."`
	Instructions   *string  `json:"instructions,omitempty" doc:"cat.agent.instructions, the system message."`
	Temperature    *float64 `json:"temperature,omitempty" doc:"cat.agent.temperature, 0 to 2."`
	MaxTokens      *int     `json:"max_tokens,omitempty" doc:"cat.agent.max_tokens, 1 to 1048576."`
	TimeoutSeconds *int     `json:"timeout_seconds,omitempty" doc:"cat.agent.timeout_seconds, 1 to 600."`
}

// LegacyOverride changes cat.legacy.* keys.
type LegacyOverride struct {
	Models   *[]string `json:"models,omitempty" doc:"cat.legacy.models: stages among greeting, intent, qa, default."`
	MinScore *float64  `json:"min_score,omitempty" doc:"cat.legacy.min_score, 0 to 1."`
}

// CustomOverride changes cat.custom.* keys.
type CustomOverride struct {
	Rules        *[]string `json:"rules,omitempty" doc:"cat.custom.rules, each '<kind> <argument> => <route>'."`
	DefaultRoute *string   `json:"default_route,omitempty" doc:"cat.custom.default_route."`
}

// override is the core's form of the body.
func (o Override) override() overlay.Override {
	out := overlay.Override{ChatMode: o.ChatMode}
	if o.Agent != nil {
		a := overlay.AgentOverride(*o.Agent)
		out.Agent = &a
	}
	if o.Legacy != nil {
		l := overlay.LegacyOverride(*o.Legacy)
		out.Legacy = &l
	}
	if o.Custom != nil {
		c := overlay.CustomOverride(*o.Custom)
		out.Custom = &c
	}
	return out
}

// registerConfig adds GET /config and POST /config/sync.
func registerConfig(api huma.API, c *chatAPI) {
	op := func(id, method, path, summary, desc string, statuses ...int) huma.Operation {
		return huma.Operation{
			OperationID: id, Method: method, Path: Prefix + path, Summary: summary,
			Description: desc + " Needs role admin.", Tags: []string{tagConfig}, Security: security,
			Responses: errorResponses(api, append([]int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
				http.StatusUnprocessableEntity, http.StatusInternalServerError, http.StatusServiceUnavailable}, statuses...)...),
			Middlewares: middlewares(),
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
	out.Security.CORS.AllowedOrigins = base.NonNil(out.Security.CORS.AllowedOrigins)
	return out
}
