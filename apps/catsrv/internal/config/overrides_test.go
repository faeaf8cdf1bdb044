package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/adapters/files/catfiles"
	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
)

// These tests moved here from adapters/files/catfiles with the parsing of the
// override variables: each drives the environment through Load and the
// overrides it makes through catfiles.Load, as serve does.

// loadCats writes the files to a directory and loads it with the
// overrides of env.
func loadCats(t *testing.T, files map[string]string, env []string) (*catfiles.Directory, error) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(env, nil)
	if err != nil {
		return nil, err
	}
	return catfiles.Load(dir, cfg.CatOverrides)
}

// cat returns the defaults of name changed by edit.
func cat(name string, edit func(*catconfig.Cat)) catconfig.Cat {
	c := catconfig.Defaults(name)
	edit(&c)
	return c
}

// typedFile sets a key of each kind the typed overrides case overrides.
const typedFile = `
cat:
  agent:
    instructions: "Answer briefly."
  legacy:
    models: [qa, default]
security:
  jwt:
    expiration_hours: 12
  providers:
    provider_a: {enabled: true}
`

// TestCatOverrides drives each environment through Load and
// catfiles.Load: the CATs it configures, or the error (every fragment of
// refused must appear in it).
func TestCatOverrides(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		env     []string
		want    []catconfig.Cat
		refused []string
	}{
		{name: "global override applies to every CAT",
			files: map[string]string{"a.yaml": "", "b.yaml": ""},
			env:   []string{"CATSRV_CAT__CAT__CHAT_MODE=agent"},
			want: []catconfig.Cat{
				cat("a", func(c *catconfig.Cat) { c.Chat.ChatMode = catconfig.ModeAgent }),
				cat("b", func(c *catconfig.Cat) { c.Chat.ChatMode = catconfig.ModeAgent }),
			}},
		{name: "per-CAT override applies to that CAT only",
			files: map[string]string{"a.yaml": "", "demo.yaml": ""},
			env:   []string{"CATSRV_CATS__DEMO__SECURITY__ANALYTICS__PUBLIC=true"},
			want: []catconfig.Cat{
				catconfig.Defaults("a"),
				cat("demo", func(c *catconfig.Cat) { c.Security.Analytics.Public = true }),
			}},
		{name: "a generic provider enabled for one CAT",
			files: map[string]string{"a.yaml": "", "demo.yaml": ""},
			env:   []string{"CATSRV_CATS__DEMO__SECURITY__PROVIDERS__CORP__ENABLED=true"},
			want: []catconfig.Cat{
				catconfig.Defaults("a"),
				cat("demo", func(c *catconfig.Cat) {
					c.Security.Providers.Generic = map[string]catconfig.Provider{"corp": {Enabled: true}}
				}),
			}},
		{name: "per-CAT beats global beats file",
			files: map[string]string{"a.yaml": "cat: {chat_mode: agent}", "b.yaml": "cat: {chat_mode: agent}"},
			env:   []string{"CATSRV_CATS__A__CAT__CHAT_MODE=legacy", "CATSRV_CAT__CAT__CHAT_MODE=custom"},
			want: []catconfig.Cat{
				cat("a", func(c *catconfig.Cat) { c.Chat.ChatMode = catconfig.ModeLegacy }),
				cat("b", func(c *catconfig.Cat) { c.Chat.ChatMode = catconfig.ModeCustom }),
			}},
		{name: "typed overrides: list, integer, boolean, string",
			files: map[string]string{"demo.yaml": typedFile},
			env: []string{
				"CATSRV_CAT__CAT__LEGACY__MODELS=greeting, qa",
				"CATSRV_CAT__SECURITY__JWT__EXPIRATION_HOURS=48",
				"CATSRV_CAT__SECURITY__PROVIDERS__PROVIDER_A__ENABLED=false",
				"CATSRV_CATS__DEMO__CAT__AGENT__INSTRUCTIONS=Be kind, be brief.",
			},
			want: []catconfig.Cat{cat("demo", func(c *catconfig.Cat) {
				c.Chat.Legacy.Models = []string{"greeting", "qa"}
				c.Security.JWT.ExpirationHours = 48
				c.Security.Providers.ProviderA.Enabled = false
				c.Chat.Agent.Instructions = "Be kind, be brief."
			})}},
		{name: "an empty list override empties the list",
			files: map[string]string{"demo.yaml": ""},
			env:   []string{"CATSRV_CAT__CAT__LEGACY__MODELS="},
			want:  []catconfig.Cat{cat("demo", func(c *catconfig.Cat) { c.Chat.Legacy.Models = []string{} })}},
		{name: "a dash in the CAT name is an underscore in the variable",
			files: map[string]string{"my-cat.yaml": ""},
			env:   []string{"CATSRV_CATS__MY_CAT__SECURITY__JWT__EXPIRATION_HOURS=2"},
			want:  []catconfig.Cat{cat("my-cat", func(c *catconfig.Cat) { c.Security.JWT.ExpirationHours = 2 })}},
		{name: "a CAT name that spells like a path still resolves",
			files: map[string]string{"a.yaml": "", "a__cat.yaml": ""},
			env:   []string{"CATSRV_CATS__A__CAT__CAT__CHAT_MODE=agent"},
			want: []catconfig.Cat{
				catconfig.Defaults("a"),
				cat("a__cat", func(c *catconfig.Cat) { c.Chat.ChatMode = catconfig.ModeAgent }),
			}},
		{name: "number from the environment",
			files: map[string]string{"demo.yaml": "cat:\n  agent:\n    temperature: 0.9\n"},
			env:   []string{"CATSRV_CAT__CAT__AGENT__TEMPERATURE=0.25"},
			want:  []catconfig.Cat{cat("demo", func(c *catconfig.Cat) { c.Chat.Agent.Temperature = 0.25 })}},
		{name: "unrelated variables are ignored",
			files: map[string]string{"demo.yaml": ""},
			env:   []string{"CATSRV_JWT_SECRET=s3cret", "PATH=/bin", "CATSRV_CATALOG=x", "NOEQUALS"},
			want:  []catconfig.Cat{catconfig.Defaults("demo")}},
		{name: "override of an unknown key", files: map[string]string{"demo.yaml": ""},
			env:     []string{"CATSRV_CAT__CAT__CHATMODE=agent"},
			refused: []string{"CATSRV_CAT__CAT__CHATMODE", "unknown key cat.chatmode"}},
		{name: "per-CAT override of an unknown key", files: map[string]string{"demo.yaml": ""},
			env:     []string{"CATSRV_CATS__DEMO__SECURITY__JWT__SECRET=x"},
			refused: []string{"CATSRV_CATS__DEMO__SECURITY__JWT__SECRET", "unknown key security.jwt.secret"}},
		{name: "override of an unknown CAT", files: map[string]string{"demo.yaml": ""},
			env:     []string{"CATSRV_CATS__OTHER__CAT__CHAT_MODE=agent"},
			refused: []string{"CATSRV_CATS__OTHER__CAT__CHAT_MODE", "names no configured CAT"}},
		{name: "per-CAT override with no CAT configured", files: map[string]string{},
			env:     []string{"CATSRV_CATS__DEMO__CAT__CHAT_MODE=agent"},
			refused: []string{"CATSRV_CATS__DEMO__CAT__CHAT_MODE", "names no configured CAT"}},
		{name: "override that is not a boolean", files: map[string]string{"demo.yaml": ""},
			env:     []string{"CATSRV_CAT__SECURITY__ANALYTICS__PUBLIC=yes please"},
			refused: []string{"CATSRV_CAT__SECURITY__ANALYTICS__PUBLIC", "want a boolean"}},
		{name: "override that is not an integer", files: map[string]string{"demo.yaml": ""},
			env:     []string{"CATSRV_CATS__DEMO__SECURITY__JWT__EXPIRATION_HOURS=24h"},
			refused: []string{"CATSRV_CATS__DEMO__SECURITY__JWT__EXPIRATION_HOURS", "want an integer"}},
		{name: "override with a bad value names the variable", files: map[string]string{"demo.yaml": ""},
			env:     []string{"CATSRV_CAT__CAT__CHAT_MODE=foo"},
			refused: []string{"demo.yaml", "cat.chat_mode", `"foo"`, "set by CATSRV_CAT__CAT__CHAT_MODE"}},
		{name: "override with a bad list item", files: map[string]string{"demo.yaml": ""},
			env:     []string{"CATSRV_CATS__DEMO__CAT__LEGACY__MODELS=qa,chitchat"},
			refused: []string{"cat.legacy.models", "chitchat", "set by CATSRV_CATS__DEMO__CAT__LEGACY__MODELS"}},
		{name: "override fitting two CATs", files: map[string]string{"a-b.yaml": "", "a_b.yaml": ""},
			env:     []string{"CATSRV_CATS__A_B__CAT__CHAT_MODE=agent"},
			refused: []string{"CATSRV_CATS__A_B__CAT__CHAT_MODE", "ambiguous", "a-b and a_b"}},
		{name: "bad number in the environment", files: map[string]string{"demo.yaml": ""},
			env:     []string{"CATSRV_CAT__CAT__AGENT__TEMPERATURE=NaN"},
			refused: []string{"want a number"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := loadCats(t, tt.files, tt.env)
			if tt.refused != nil {
				if errs.KindOf(err) != errs.KindInvalid {
					t.Fatalf("error %v, want an invalid one", err)
				}
				for _, w := range tt.refused {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			got, err := d.Cats(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Cats:\n got %+v\nwant %+v", got, tt.want)
			}
			for _, w := range tt.want {
				one, err := d.Cat(t.Context(), w.Name)
				if err != nil || !reflect.DeepEqual(one, w) {
					t.Errorf("Cat(%q) = %+v, %v; want %+v", w.Name, one, err, w)
				}
			}
		})
	}
}
