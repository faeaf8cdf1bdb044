package catfiles_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/catsrv/catsrv/adapters/catfiles"
	"github.com/catsrv/catsrv/core/catconfig"
)

// cat returns the defaults of name changed by edit.
func cat(name string, edit func(*catconfig.Cat)) catconfig.Cat {
	c := catconfig.Defaults(name)
	if edit != nil {
		edit(&c)
	}
	return c
}

func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const fullFile = `
cat:
  chat_mode: agent
  agent:
    model: gpt-4o
    instructions: "Answer briefly."
  legacy:
    models: [qa, default]
security:
  jwt:
    algorithm: HS256
    expiration_hours: 12
  providers:
    provider_a: {enabled: true}
    provider_b: {enabled: true}
    provider_c: {enabled: false}
  analytics:
    public: true
`

func fullCat(name string) catconfig.Cat {
	return cat(name, func(c *catconfig.Cat) {
		c.Chat.ChatMode = catconfig.ModeAgent
		c.Chat.Agent.Model, c.Chat.Agent.Instructions = "gpt-4o", "Answer briefly."
		c.Chat.Legacy.Models = []string{"qa", "default"}
		c.Security.JWT.ExpirationHours = 12
		c.Security.Providers.ProviderA.Enabled = true
		c.Security.Providers.ProviderB.Enabled = true
		c.Security.Analytics.Public = true
	})
}

func TestLoadValid(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		env   []string
		want  []catconfig.Cat
	}{
		{name: "empty file gives the defaults", files: map[string]string{"demo.yaml": ""},
			want: []catconfig.Cat{catconfig.Defaults("demo")}},
		{name: "empty and null sections keep the defaults",
			files: map[string]string{"demo.yaml": "cat: {}\nsecurity:\n  jwt:\n  analytics: ~\n"},
			want:  []catconfig.Cat{catconfig.Defaults("demo")}},
		{name: "full file", files: map[string]string{"demo.yaml": fullFile},
			want: []catconfig.Cat{fullCat("demo")}},
		{name: ".yml is accepted", files: map[string]string{"demo.yml": "cat: {chat_mode: custom}"},
			want: []catconfig.Cat{cat("demo", func(c *catconfig.Cat) { c.Chat.ChatMode = catconfig.ModeCustom })}},
		{name: "a shorter list replaces the default list",
			files: map[string]string{"demo.yaml": "cat: {legacy: {models: [qa]}}"},
			want:  []catconfig.Cat{cat("demo", func(c *catconfig.Cat) { c.Chat.Legacy.Models = []string{"qa"} })}},
		{name: "an empty list is kept empty",
			files: map[string]string{"demo.yaml": "cat: {legacy: {models: []}}"},
			want:  []catconfig.Cat{cat("demo", func(c *catconfig.Cat) { c.Chat.Legacy.Models = []string{} })}},
		{name: "other files, dotfiles and directories are ignored",
			files: map[string]string{"demo.yaml": "", "README.md": "x: 1", ".hidden.yaml": "bad: key", "notes.txt": ""},
			want:  []catconfig.Cat{catconfig.Defaults("demo")}},
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
		{name: "per-CAT beats global beats file",
			files: map[string]string{"a.yaml": "cat: {chat_mode: agent}", "b.yaml": "cat: {chat_mode: agent}"},
			env:   []string{"CATSRV_CATS__A__CAT__CHAT_MODE=legacy", "CATSRV_CAT__CAT__CHAT_MODE=custom"},
			want: []catconfig.Cat{
				cat("a", func(c *catconfig.Cat) { c.Chat.ChatMode = catconfig.ModeLegacy }),
				cat("b", func(c *catconfig.Cat) { c.Chat.ChatMode = catconfig.ModeCustom }),
			}},
		{name: "typed overrides: list, integer, boolean, string",
			files: map[string]string{"demo.yaml": fullFile},
			env: []string{
				"CATSRV_CAT__CAT__LEGACY__MODELS=greeting, qa",
				"CATSRV_CAT__SECURITY__JWT__EXPIRATION_HOURS=48",
				"CATSRV_CAT__SECURITY__PROVIDERS__PROVIDER_A__ENABLED=false",
				"CATSRV_CATS__DEMO__CAT__AGENT__INSTRUCTIONS=Be kind, be brief.",
			},
			want: []catconfig.Cat{cat("demo", func(c *catconfig.Cat) {
				*c = fullCat("demo")
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
		{name: "unrelated variables are ignored",
			files: map[string]string{"demo.yaml": ""},
			env:   []string{"CATSRV_JWT_SECRET=s3cret", "PATH=/bin", "CATSRV_CATALOG=x", "NOEQUALS"},
			want:  []catconfig.Cat{catconfig.Defaults("demo")}},
		{name: "empty directory configures no CAT", files: map[string]string{}, want: []catconfig.Cat{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeDir(t, tt.files)
			if err := os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o700); err != nil {
				t.Fatal(err)
			}
			d, err := catfiles.Load(dir, tt.env)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			got, err := d.Cats(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Cats:\n got %+v\nwant %+v", got, tt.want)
			}
			for _, w := range tt.want {
				one, err := d.Cat(context.Background(), w.Name)
				if err != nil || !reflect.DeepEqual(one, w) {
					t.Errorf("Cat(%q) = %+v, %v; want %+v", w.Name, one, err, w)
				}
			}
		})
	}
}
