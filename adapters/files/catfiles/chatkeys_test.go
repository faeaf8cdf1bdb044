package catfiles_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/adapters/files/catfiles"
)

// TestChatKeys covers what the chat keys brought: numbers (an integer
// written where a number is wanted is fine) and rule validation.
func TestChatKeys(t *testing.T) {
	cases := []struct {
		name    string
		file    string
		check   func(t *testing.T, d *catfiles.Directory)
		wantErr string
	}{
		{"integer as a number", "cat:\n  agent:\n    temperature: 1\n", func(t *testing.T, d *catfiles.Directory) {
			c, _ := d.Cat(t.Context(), "demo")
			if c.Chat.Agent.Temperature != 1 {
				t.Fatalf("temperature = %v", c.Chat.Agent.Temperature)
			}
		}, ""},
		{"rules", "cat:\n  chat_mode: custom\n  custom:\n    rules: [\"keyword refund => agent\"]\n    default_route: qa\n", func(t *testing.T, d *catfiles.Directory) {
			c, _ := d.Cat(t.Context(), "demo")
			if len(c.Chat.Custom.Rules) != 1 || c.Chat.Custom.DefaultRoute != "qa" {
				t.Fatalf("custom = %+v", c.Chat.Custom)
			}
		}, ""},
		{"number as a string", "cat:\n  agent:\n    temperature: \"hot\"\n", nil, "want a number"},
		{"bad rule", "cat:\n  custom:\n    rules: [\"keyword refund => human\"]\n", nil, "cat.custom.rules[0]"},
		{"negative retention", "analytics:\n  retention_days: -1\n", nil, "analytics.retention_days"},
		{"retention as a string", "chat:\n  retention_days: forever\n", nil, "want an integer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "demo.yaml"), []byte(c.file), 0o600); err != nil {
				t.Fatal(err)
			}
			d, err := catfiles.Load(dir, nil)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("Load = %v, want an error mentioning %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, d)
		})
	}
}
