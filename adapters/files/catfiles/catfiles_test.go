package catfiles_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/adapters/files/catfiles"
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
		{name: "generic OpenID Connect providers", files: map[string]string{"demo.yaml": "security: {providers: {corp: {enabled: true}, dex: {enabled: false}, provider_b: {enabled: true}}}"},
			want: []catconfig.Cat{cat("demo", func(c *catconfig.Cat) {
				c.Security.Providers.ProviderB.Enabled = true
				c.Security.Providers.Generic = map[string]catconfig.Provider{"corp": {Enabled: true}, "dex": {Enabled: false}}
			})}},
		{name: "empty directory configures no CAT", files: map[string]string{}, want: []catconfig.Cat{}},
		{name: "retention keys",
			files: map[string]string{"demo.yaml": "analytics:\n  retention_days: 30\nchat:\n  retention_days: 7\n"},
			want: []catconfig.Cat{cat("demo", func(c *catconfig.Cat) {
				c.Analytics.RetentionDays, c.ChatLog.RetentionDays = 30, 7
			})}},
		{name: "counts of tokens are not secrets; feedback reasons",
			files: map[string]string{"demo.yaml": "cat:\n  agent: {max_tokens: 99}\n  budget: {monthly_tokens: 1000000, user_daily_tokens: 5000}\n  feedback: {reasons: [wrong, unsafe]}\n"},
			want: []catconfig.Cat{cat("demo", func(c *catconfig.Cat) {
				c.Chat.Agent.MaxTokens = 99
				c.Chat.Budget = catconfig.Budget{MonthlyTokens: 1000000, UserDailyTokens: 5000}
				c.Chat.Feedback.Reasons = []string{"wrong", "unsafe"}
			})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeDir(t, tt.files)
			if err := os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o700); err != nil {
				t.Fatal(err)
			}
			d, err := catfiles.Load(dir, nil)
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

// TestPricing reads cat.pricing.<model>.* from a file, model names with
// dots included, and refuses a negative price.
func TestPricing(t *testing.T) {
	dir := writeDir(t, map[string]string{"demo.yaml": "cat:\n  pricing:\n    gpt-4.1: {input_per_mtok: 2, output_per_mtok: 8.5}\n    small: {output_per_mtok: 0.5}\n    empty: {}\n"})
	d, err := catfiles.Load(dir, []catfiles.Override{{Source: "X", Key: "cat.pricing.small.input_per_mtok", Value: 0.25}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Cat(t.Context(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]catconfig.Price{"gpt-4.1": {InputPerMTok: 2, OutputPerMTok: 8.5}, "small": {InputPerMTok: 0.25, OutputPerMTok: 0.5}}
	if !reflect.DeepEqual(c.Chat.Pricing, want) {
		t.Fatalf("pricing = %+v, want %+v", c.Chat.Pricing, want)
	}
	if got := c.PriceOf("gpt-4.1").Cost(1_000_000, 2_000_000); got != 19 {
		t.Fatalf("cost = %v, want 19", got)
	}
	bad := writeDir(t, map[string]string{"demo.yaml": "cat: {pricing: {m: {input_per_mtok: -1}}}"})
	if _, err := catfiles.Load(bad, nil); err == nil || !strings.Contains(err.Error(), "cat.pricing.m.input_per_mtok") {
		t.Fatalf("negative price: err = %v", err)
	}
	typo := writeDir(t, map[string]string{"demo.yaml": "cat: {pricing: {m: {input_per_tok: 1}}}"})
	if _, err := catfiles.Load(typo, nil); err == nil || !strings.Contains(err.Error(), "unknown key cat.pricing.m.input_per_tok") {
		t.Fatalf("misspelt leaf: err = %v", err)
	}
}
