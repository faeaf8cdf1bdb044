// Package catconfig is the per-CAT configuration: its keys, their defaults
// and the rules a configuration must satisfy. Adapters load it from files and
// the environment; the core only reads it.
package catconfig

import (
	"regexp"
	"slices"

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
}

// Chat holds the cat.* keys.
type Chat struct {
	ChatMode string `config:"chat_mode" json:"chat_mode"`
	Agent    Agent  `config:"agent" json:"agent"`
	Legacy   Legacy `config:"legacy" json:"legacy"`
}

// Agent holds the cat.agent.* keys.
type Agent struct {
	Model        string `config:"model" json:"model"`
	Instructions string `config:"instructions" json:"instructions"`
}

// Legacy holds the cat.legacy.* keys.
type Legacy struct {
	Models []string `config:"models" json:"models"`
}

// Security holds the security.* keys.
type Security struct {
	JWT       JWT             `config:"jwt" json:"jwt"`
	Providers Providers       `config:"providers" json:"providers"`
	Analytics AnalyticsAccess `config:"analytics" json:"analytics"`
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
			Agent:    Agent{Instructions: "You are a helpful assistant."},
			Legacy:   Legacy{Models: slices.Clone(LegacyStages)},
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
	if c.Security.JWT.Algorithm != "HS256" {
		return errs.New(errs.KindInvalid, "security.jwt.algorithm: %q is not supported (only HS256)", c.Security.JWT.Algorithm)
	}
	if h := c.Security.JWT.ExpirationHours; h < 1 || h > 24*30 {
		return errs.New(errs.KindInvalid, "security.jwt.expiration_hours: %d is not between 1 and 720", h)
	}
	return nil
}
