// Package catconfig is the per-CAT configuration: its keys, their defaults
// and the rules a configuration must satisfy. Adapters load it from files and
// the environment; the core only reads it.
package catconfig

import (
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/chat/router"
	"github.com/catsrv/catsrv/core/chat/toolpolicy"
	"github.com/catsrv/catsrv/core/errs"
)

// Chat modes a CAT can route /chat by.
const (
	ModeLegacy = "legacy"
	ModeAgent  = "agent"
	ModeCustom = "custom"
)

// LegacyStages are the stage names the legacy pipeline knows.
var LegacyStages = []string{"greeting", "intent", "qa", "default"}

// Cat is the configuration of one CAT. Struct tags name the keys of the
// configuration files (tag "config").
type Cat struct {
	Name     string   `config:"-" json:"name"`
	Chat     Chat     `config:"cat" json:"cat"`
	Security Security `config:"security" json:"security"`
	// Analytics and ChatLog hold the retention keys (retention.go).
	Analytics AnalyticsKeys `config:"analytics" json:"analytics"`
	ChatLog   ChatLogKeys   `config:"chat" json:"chat"`
}

// Chat holds the cat.* keys.
type Chat struct {
	ChatMode string `config:"chat_mode" json:"chat_mode"`
	Agent    Agent  `config:"agent" json:"agent"`
	Legacy   Legacy `config:"legacy" json:"legacy"`
	Custom   Custom `config:"custom" json:"custom"`
	// Knowledge holds the CAT's documents and their retrieval
	// (knowledge.go).
	Knowledge Knowledge `config:"knowledge" json:"knowledge"`
	// MaxMessageBytes bounds a chat message (chat.max_message_bytes lives
	// under cat. so one file section holds every chat knob).
	MaxMessageBytes int `config:"max_message_bytes" json:"max_message_bytes"`
	// Feedback and Budget hold the feedback reasons and the agent's token
	// budgets (feedback.go).
	Feedback Feedback `config:"feedback" json:"feedback"`
	Budget   Budget   `config:"budget" json:"budget"`
	// Pricing holds cat.pricing.<model>.*, by model (pricing.go): the
	// cost of an interaction that comes without one.
	Pricing map[string]Price `config:"pricing" json:"pricing,omitempty"`
}

// Agent holds the cat.agent.* keys. An empty BaseURL leaves the agent mode
// unconfigured: it answers "unavailable" rather than guessing an endpoint.
// The API key is not here: secrets come from the environment only.
type Agent struct {
	Model          string  `config:"model" json:"model"`
	Instructions   string  `config:"instructions" json:"instructions"`
	BaseURL        string  `config:"base_url" json:"base_url"`
	Temperature    float64 `config:"temperature" json:"temperature"`
	MaxTokens      int     `config:"max_tokens" json:"max_tokens"`
	TimeoutSeconds int     `config:"timeout_seconds" json:"timeout_seconds"`
	// MaxSteps bounds the model calls of one turn (1-50); at the bound one
	// last call without tools asks for the answer.
	MaxSteps int `config:"max_steps" json:"max_steps"`
	// ToolTimeoutSeconds bounds one tool call.
	ToolTimeoutSeconds int `config:"tool_timeout_seconds" json:"tool_timeout_seconds"`
	// ApprovalTimeoutSeconds is how long an "ask" call waits for a
	// decision before it counts as denied.
	ApprovalTimeoutSeconds int `config:"approval_timeout_seconds" json:"approval_timeout_seconds"`
	// MCPServers come only from the CAT's file, never from a runtime
	// change (POST /config/sync).
	MCPServers []MCPServer `config:"mcp_servers" json:"mcp_servers"`
	// Tools is the tool policy: rules "<server>/<tool glob> => allow|ask|deny",
	// first match wins, no match allows.
	Tools []string `config:"tools" json:"tools"`
}

// MCPServer is one MCP server of a CAT's agent: a command run over stdio,
// or a URL spoken to over streamable HTTP (falling back to SSE). In Env
// and Headers values, ${ENV_NAME} is filled from the environment by the
// composition root; in Headers, {{user}} and {{cat}} are filled per turn.
type MCPServer struct {
	Name    string            `config:"name" json:"name"`
	Command []string          `config:"command" json:"command,omitempty"`
	Env     map[string]string `config:"env" json:"env,omitempty"`
	URL     string            `config:"url" json:"url,omitempty"`
	Headers map[string]string `config:"headers" json:"headers,omitempty"`
}

// Legacy holds the cat.legacy.* keys. KnowledgeBase is the path of the
// CAT's knowledge file (question/answer pairs and intents); empty means
// none, so the qa and intent stages never answer.
type Legacy struct {
	Models        []string `config:"models" json:"models"`
	KnowledgeBase string   `config:"knowledge_base" json:"knowledge_base"`
	DefaultAnswer string   `config:"default_answer" json:"default_answer"`
	MinScore      float64  `config:"min_score" json:"min_score"`
}

// Custom holds the cat.custom.* keys: routing rules of the custom mode,
// each "<kind> <argument> => <route>" (see core/chat/router), tried in
// order, and the route taken when none matches.
type Custom struct {
	Rules        []string `config:"rules" json:"rules"`
	DefaultRoute string   `config:"default_route" json:"default_route"`
}

// Chat limits and defaults.
const (
	DefaultMaxMessageBytes = 32 << 10
	MaxMaxMessageBytes     = analytics.MaxFieldBytes // a question must stay storable as an interaction
	DefaultDefaultAnswer   = "Sorry, I do not know the answer to that yet."
)

// Security holds the security.* keys.
type Security struct {
	JWT       JWT             `config:"jwt" json:"jwt"`
	Providers Providers       `config:"providers" json:"providers"`
	Analytics AnalyticsAccess `config:"analytics" json:"analytics"`
	CORS      CORS            `config:"cors" json:"cors"`
}

// CORS holds security.cors.*: the browser origins (scheme://host[:port])
// allowed to call the API with credentials. The server's policy is the
// union of every CAT's list (one server, one origin policy).
type CORS struct {
	AllowedOrigins []string `config:"allowed_origins" json:"allowed_origins"`
}

// JWT holds security.jwt.*: the signing algorithm (only HS256) and the
// access token lifetime.
type JWT struct {
	Algorithm       string `config:"algorithm" json:"algorithm"`
	ExpirationHours int    `config:"expiration_hours" json:"expiration_hours"`
}

// Providers holds security.providers.*.
type Providers struct {
	ProviderA Provider `config:"provider_a" json:"provider_a"`
	ProviderB Provider `config:"provider_b" json:"provider_b"`
	ProviderC Provider `config:"provider_c" json:"provider_c"`
	// Generic holds security.providers.<name>.* of the generic OpenID
	// Connect providers (every other name), by name. It is not part of
	// the configuration document GET /api/v1/cat/config answers.
	Generic map[string]Provider `config:",remain" json:"-"`
}

// Enabled reads security.providers.<name>.enabled of any provider.
func (p Providers) Enabled(name string) bool {
	switch name {
	case "provider_a":
		return p.ProviderA.Enabled
	case "provider_b":
		return p.ProviderB.Enabled
	case "provider_c":
		return p.ProviderC.Enabled
	}
	return p.Generic[name].Enabled
}

// providerName is the name of a generic provider: a lower-case letter,
// then up to 31 lower-case letters, digits or _.
var providerName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// ValidProviderName reports whether name can name a generic provider
// (its route segment and its security.providers key).
func ValidProviderName(name string) bool { return providerName.MatchString(name) }

// GenericProviderKey returns the name of the generic provider whose
// security.providers.<name>.enabled key this is, if it is one.
func GenericProviderKey(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, "security.providers.")
	if !ok {
		return "", false
	}
	name, leaf, ok := strings.Cut(rest, ".")
	if !ok || leaf != "enabled" || !ValidProviderName(name) {
		return "", false
	}
	switch name {
	case "provider_a", "provider_b", "provider_c":
		return "", false
	}
	return name, true
}

// Provider holds security.providers.<p>.*.
type Provider struct {
	Enabled bool `config:"enabled" json:"enabled"`
}

// AnalyticsAccess holds security.analytics.*. Public opens the CAT's
// analytics to callers without an admin token.
type AnalyticsAccess struct {
	Public bool `config:"public" json:"public"`
}

// Defaults returns the configuration a CAT has when its file sets nothing.
func Defaults(name string) Cat {
	return Cat{
		Name: name,
		Chat: Chat{
			ChatMode: ModeLegacy,
			Agent: Agent{
				Instructions: "You are a helpful assistant.",
				Temperature:  0.7, MaxTokens: 1024, TimeoutSeconds: 60,
				MaxSteps: 8, ToolTimeoutSeconds: 30, ApprovalTimeoutSeconds: 120,
			},
			Legacy: Legacy{
				Models: slices.Clone(LegacyStages), DefaultAnswer: DefaultDefaultAnswer, MinScore: 0.5,
			},
			Custom:          Custom{DefaultRoute: ModeLegacy},
			Knowledge:       defaultKnowledge(),
			MaxMessageBytes: DefaultMaxMessageBytes,
		},
		Security: Security{JWT: JWT{Algorithm: "HS256", ExpirationHours: 24}},
	}
}

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// ValidName reports whether name can name a CAT: 1 to 64 lower-case letters,
// digits, '-' or '_', starting with a letter or digit.
func ValidName(name string) bool { return namePattern.MatchString(name) }

// Validate checks every key and names the first bad one.
func (c Cat) Validate() error {
	if !ValidName(c.Name) {
		return errs.New(errs.KindInvalid, "invalid CAT name %q: use 1-64 of a-z, 0-9, '-', '_'", c.Name)
	}
	if !slices.Contains([]string{ModeLegacy, ModeAgent, ModeCustom}, c.Chat.ChatMode) {
		return errs.New(errs.KindInvalid, "cat.chat_mode: %q is not one of legacy, agent, custom", c.Chat.ChatMode)
	}
	for _, m := range c.Chat.Legacy.Models {
		if !slices.Contains(LegacyStages, m) {
			return errs.New(errs.KindInvalid, "cat.legacy.models: %q is not one of greeting, intent, qa, default", m)
		}
	}
	if err := c.Chat.validate(); err != nil {
		return err
	}
	if err := c.Chat.Knowledge.validate(); err != nil {
		return err
	}
	if c.Security.JWT.Algorithm != "HS256" {
		return errs.New(errs.KindInvalid, "security.jwt.algorithm: %q is not supported (only HS256)", c.Security.JWT.Algorithm)
	}
	if h := c.Security.JWT.ExpirationHours; h < 1 || h > 24*30 {
		return errs.New(errs.KindInvalid, "security.jwt.expiration_hours: %d is not between 1 and 720", h)
	}
	if err := c.validateRetention(); err != nil {
		return err
	}
	for _, o := range c.Security.CORS.AllowedOrigins {
		if !ValidOrigin(o) {
			return errs.New(errs.KindInvalid, "security.cors.allowed_origins: %q is not an origin: want scheme://host[:port] (http or https, no path, no wildcard)", o)
		}
	}
	return nil
}

// ValidOrigin reports whether o is an http(s) origin as browsers send it:
// scheme://host[:port], nothing else. A wildcard is not an origin.
func ValidOrigin(o string) bool {
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && !strings.Contains(u.Host, "*") &&
		u.User == nil && u.Path == "" && u.RawQuery == "" && u.Fragment == "" && !u.ForceQuery
}

// validate checks the chat keys other than the mode and the stages.
func (c Chat) validate() error {
	a := c.Agent
	if a.BaseURL != "" {
		if u, err := url.Parse(a.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return errs.New(errs.KindInvalid, "cat.agent.base_url: %q is not an http(s) URL without credentials", a.BaseURL)
		}
	}
	switch {
	case a.Temperature < 0 || a.Temperature > 2:
		return errs.New(errs.KindInvalid, "cat.agent.temperature: %v is not between 0 and 2", a.Temperature)
	case a.MaxTokens < 1 || a.MaxTokens > 1<<20:
		return errs.New(errs.KindInvalid, "cat.agent.max_tokens: %d is not between 1 and 1048576", a.MaxTokens)
	case a.TimeoutSeconds < 1 || a.TimeoutSeconds > 600:
		return errs.New(errs.KindInvalid, "cat.agent.timeout_seconds: %d is not between 1 and 600", a.TimeoutSeconds)
	case c.Legacy.MinScore < 0 || c.Legacy.MinScore > 1:
		return errs.New(errs.KindInvalid, "cat.legacy.min_score: %v is not between 0 and 1", c.Legacy.MinScore)
	case strings.TrimSpace(c.Legacy.DefaultAnswer) == "":
		return errs.New(errs.KindInvalid, "cat.legacy.default_answer: must not be empty")
	case c.MaxMessageBytes < 1 || c.MaxMessageBytes > MaxMaxMessageBytes:
		return errs.New(errs.KindInvalid, "cat.max_message_bytes: %d is not between 1 and %d", c.MaxMessageBytes, MaxMaxMessageBytes)
	case !slices.Contains(router.Routes, c.Custom.DefaultRoute):
		return errs.New(errs.KindInvalid, "cat.custom.default_route: %q is not one of %s", c.Custom.DefaultRoute, strings.Join(router.Routes, ", "))
	}
	if err := a.validateTools(); err != nil {
		return err
	}
	if err := c.Feedback.validate(); err != nil {
		return err
	}
	if err := c.Budget.validate(); err != nil {
		return err
	}
	if err := c.validatePricing(); err != nil {
		return err
	}
	for i, r := range c.Custom.Rules {
		if _, err := router.ParseRule(r); err != nil {
			return errs.New(errs.KindInvalid, "cat.custom.rules[%d]: %s", i, errs.PublicMessage(err, "invalid rule"))
		}
	}
	return nil
}

var serverNamePattern = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)

// validateTools checks the agent's loop and tool keys: the step and time
// bounds, the MCP servers (names unique, exactly one of command and url)
// and the policy rules.
func (a Agent) validateTools() error {
	switch {
	case a.MaxSteps < 1 || a.MaxSteps > 50:
		return errs.New(errs.KindInvalid, "cat.agent.max_steps: %d is not between 1 and 50", a.MaxSteps)
	case a.ToolTimeoutSeconds < 1 || a.ToolTimeoutSeconds > 3600:
		return errs.New(errs.KindInvalid, "cat.agent.tool_timeout_seconds: %d is not between 1 and 3600", a.ToolTimeoutSeconds)
	case a.ApprovalTimeoutSeconds < 1 || a.ApprovalTimeoutSeconds > 86400:
		return errs.New(errs.KindInvalid, "cat.agent.approval_timeout_seconds: %d is not between 1 and 86400", a.ApprovalTimeoutSeconds)
	}
	seen := map[string]bool{}
	for i, s := range a.MCPServers {
		switch {
		case !serverNamePattern.MatchString(s.Name):
			return errs.New(errs.KindInvalid, "cat.agent.mcp_servers[%d].name: %q is not 1-32 of a-z, 0-9, '_', '-'", i, s.Name)
		case seen[s.Name]:
			return errs.New(errs.KindInvalid, "cat.agent.mcp_servers[%d].name: %q is used twice", i, s.Name)
		case (len(s.Command) > 0) == (s.URL != ""):
			return errs.New(errs.KindInvalid, "cat.agent.mcp_servers[%d] (%s): set exactly one of command and url", i, s.Name)
		case len(s.Command) > 0 && strings.TrimSpace(s.Command[0]) == "":
			return errs.New(errs.KindInvalid, "cat.agent.mcp_servers[%d].command: the program must not be empty", i)
		}
		if s.URL != "" {
			if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return errs.New(errs.KindInvalid, "cat.agent.mcp_servers[%d].url: %q is not an http(s) URL", i, s.URL)
			}
		}
		seen[s.Name] = true
	}
	for i, r := range a.Tools {
		if _, err := toolpolicy.Parse(r); err != nil {
			return errs.New(errs.KindInvalid, "cat.agent.tools[%d]: %s", i, errs.PublicMessage(err, "invalid rule"))
		}
	}
	return nil
}
