package catconfig_test

import (
	"strings"
	"testing"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
)

func TestValidateChatKeys(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*catconfig.Cat)
		wantErr string // "" means valid; else the key the message must start with
	}{
		{"https endpoint", func(c *catconfig.Cat) { c.Chat.Agent.BaseURL = "https://api.example.com/v1" }, ""},
		{"local endpoint", func(c *catconfig.Cat) { c.Chat.Agent.BaseURL = "http://127.0.0.1:11434/v1" }, ""},
		{"endpoint without scheme", func(c *catconfig.Cat) { c.Chat.Agent.BaseURL = "api.example.com" }, "cat.agent.base_url"},
		{"endpoint with credentials", func(c *catconfig.Cat) { c.Chat.Agent.BaseURL = "https://u:p@api.example.com" }, "cat.agent.base_url"},
		{"temperature bounds", func(c *catconfig.Cat) { c.Chat.Agent.Temperature = 2 }, ""},
		{"temperature too high", func(c *catconfig.Cat) { c.Chat.Agent.Temperature = 2.5 }, "cat.agent.temperature"},
		{"negative temperature", func(c *catconfig.Cat) { c.Chat.Agent.Temperature = -0.1 }, "cat.agent.temperature"},
		{"no tokens", func(c *catconfig.Cat) { c.Chat.Agent.MaxTokens = 0 }, "cat.agent.max_tokens"},
		{"no time-out", func(c *catconfig.Cat) { c.Chat.Agent.TimeoutSeconds = 0 }, "cat.agent.timeout_seconds"},
		{"long time-out", func(c *catconfig.Cat) { c.Chat.Agent.TimeoutSeconds = 601 }, "cat.agent.timeout_seconds"},
		{"min score above 1", func(c *catconfig.Cat) { c.Chat.Legacy.MinScore = 1.5 }, "cat.legacy.min_score"},
		{"blank default answer", func(c *catconfig.Cat) { c.Chat.Legacy.DefaultAnswer = " " }, "cat.legacy.default_answer"},
		{"message limit zero", func(c *catconfig.Cat) { c.Chat.MaxMessageBytes = 0 }, "cat.max_message_bytes"},
		{"message limit over a storable field", func(c *catconfig.Cat) { c.Chat.MaxMessageBytes = 64<<10 + 1 }, "cat.max_message_bytes"},
		{"feedback reasons", func(c *catconfig.Cat) { c.Chat.Feedback.Reasons = []string{"wrong", "too long", "unsafe"} }, ""},
		{"blank feedback reason", func(c *catconfig.Cat) { c.Chat.Feedback.Reasons = []string{"wrong", ""} }, "cat.feedback.reasons[1]"},
		{"padded feedback reason", func(c *catconfig.Cat) { c.Chat.Feedback.Reasons = []string{" wrong"} }, "cat.feedback.reasons[0]"},
		{"feedback reason twice", func(c *catconfig.Cat) { c.Chat.Feedback.Reasons = []string{"wrong", "wrong"} }, "cat.feedback.reasons[1]"},
		{"long feedback reason", func(c *catconfig.Cat) { c.Chat.Feedback.Reasons = []string{strings.Repeat("é", 65)} }, "cat.feedback.reasons[0]"},
		{"feedback reason with NUL", func(c *catconfig.Cat) { c.Chat.Feedback.Reasons = []string{"a\x00b"} }, "cat.feedback.reasons[0]"},
		{"too many feedback reasons", func(c *catconfig.Cat) {
			for i := range 51 {
				c.Chat.Feedback.Reasons = append(c.Chat.Feedback.Reasons, strings.Repeat("r", i+1))
			}
		}, "cat.feedback.reasons"},
		{"budgets", func(c *catconfig.Cat) { c.Chat.Budget = catconfig.Budget{MonthlyTokens: 1e9, UserDailyTokens: 5000} }, ""},
		{"negative monthly budget", func(c *catconfig.Cat) { c.Chat.Budget.MonthlyTokens = -1 }, "cat.budget.monthly_tokens"},
		{"negative daily budget", func(c *catconfig.Cat) { c.Chat.Budget.UserDailyTokens = -1 }, "cat.budget.user_daily_tokens"},
		{"stage as default route", func(c *catconfig.Cat) { c.Chat.Custom.DefaultRoute = "qa" }, ""},
		{"unknown default route", func(c *catconfig.Cat) { c.Chat.Custom.DefaultRoute = "human" }, "cat.custom.default_route"},
		{"valid rules", func(c *catconfig.Cat) {
			c.Chat.Custom.Rules = []string{"keyword refund => agent", "pattern ^hi => greeting", "context channel=voice => legacy"}
		}, ""},
		{"bad rule names its index", func(c *catconfig.Cat) {
			c.Chat.Custom.Rules = []string{"keyword refund => agent", "pattern ( => qa"}
		}, "cat.custom.rules[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := catconfig.Defaults("demo")
			tt.mutate(&c)
			err := c.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want valid", err)
				}
				return
			}
			if errs.KindOf(err) != errs.KindInvalid || !strings.HasPrefix(errs.PublicMessage(err, ""), tt.wantErr) {
				t.Fatalf("Validate = %v, want invalid starting with %q", err, tt.wantErr)
			}
		})
	}
}

func TestChatDefaults(t *testing.T) {
	c := catconfig.Defaults("demo").Chat
	if c.MaxMessageBytes != 32<<10 || c.Agent.BaseURL != "" || c.Legacy.DefaultAnswer == "" || c.Custom.DefaultRoute != catconfig.ModeLegacy {
		t.Fatalf("chat defaults = %+v", c)
	}
}
