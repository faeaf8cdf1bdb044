package catconfig_test

import (
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*catconfig.Cat)
		wantErr string
	}{
		{"defaults are valid", func(*catconfig.Cat) {}, ""},
		{"agent mode", func(c *catconfig.Cat) { c.Chat.ChatMode = catconfig.ModeAgent }, ""},
		{"bad name", func(c *catconfig.Cat) { c.Name = "../etc" }, "invalid CAT name"},
		{"upper-case name", func(c *catconfig.Cat) { c.Name = "Demo" }, "invalid CAT name"},
		{"bad mode", func(c *catconfig.Cat) { c.Chat.ChatMode = "magic" }, "cat.chat_mode"},
		{"bad stage", func(c *catconfig.Cat) { c.Chat.Legacy.Models = []string{"qa", "oracle"} }, "cat.legacy.models"},
		{"RS256", func(c *catconfig.Cat) { c.Security.JWT.Algorithm = "RS256" }, "security.jwt.algorithm"},
		{"zero hours", func(c *catconfig.Cat) { c.Security.JWT.ExpirationHours = 0 }, "security.jwt.expiration_hours"},
		{"too many hours", func(c *catconfig.Cat) { c.Security.JWT.ExpirationHours = 10000 }, "security.jwt.expiration_hours"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := catconfig.Defaults("demo")
			tt.mutate(&c)
			err := c.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to name %q", err, tt.wantErr)
			}
		})
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"demo": true, "a": true, "cat-1_b": true, strings.Repeat("a", 64): true,
		"": false, "-x": false, "a b": false, "a/b": false, "a\x00": false, strings.Repeat("a", 65): false,
	} {
		if got := catconfig.ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRetentionKeys(t *testing.T) {
	c := catconfig.Defaults("c")
	if c.InteractionRetention() != 0 || c.ConversationRetention() != 0 {
		t.Fatalf("default retention %s, %s; want forever (0)", c.InteractionRetention(), c.ConversationRetention())
	}
	c.Analytics.RetentionDays, c.ChatLog.RetentionDays = 30, 7
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if c.InteractionRetention() != 30*24*time.Hour || c.ConversationRetention() != 7*24*time.Hour {
		t.Errorf("retention %s, %s", c.InteractionRetention(), c.ConversationRetention())
	}
	for _, bad := range []catconfig.Cat{
		func() catconfig.Cat { c := catconfig.Defaults("c"); c.Analytics.RetentionDays = -1; return c }(),
		func() catconfig.Cat {
			c := catconfig.Defaults("c")
			c.ChatLog.RetentionDays = catconfig.MaxRetentionDays + 1
			return c
		}(),
	} {
		if err := bad.Validate(); errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("Validate(%+v, %+v) = %v, want invalid", bad.Analytics, bad.ChatLog, err)
		}
	}
}
