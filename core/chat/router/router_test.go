package router_test

import (
	"strings"
	"testing"

	"github.com/catsrv/catsrv/core/chat/router"
	"github.com/catsrv/catsrv/core/errs"
)

func TestRoute(t *testing.T) {
	rules := []string{
		"keyword refund|credit card => agent",
		"pattern ^(?i)where is my order => qa",
		"context channel=voice => greeting",
		"context vip=true => legacy",
		"keyword hours => intent",
	}
	r, err := router.New(rules, "default")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		message string
		context map[string]any
		route   string
		rule    int
	}{
		{"keyword, case-insensitive", "I want a REFUND now", nil, "agent", 0},
		{"keyword phrase", "charge on my credit card", nil, "agent", 0},
		{"keyword is a whole word", "refunds policy", nil, "default", -1},
		{"pattern", "Where is my order #42?", nil, "qa", 1},
		{"pattern anchored", "so where is my order", nil, "default", -1},
		{"context string", "hi", map[string]any{"channel": "voice"}, "greeting", 2},
		{"context bool", "hi", map[string]any{"vip": true}, "legacy", 3},
		{"context other value", "hi", map[string]any{"channel": "web"}, "default", -1},
		{"context object never equals", "hi", map[string]any{"channel": map[string]any{}}, "default", -1},
		{"first match wins", "refund, where is my order", map[string]any{"channel": "voice"}, "agent", 0},
		{"later rule", "opening hours?", nil, "intent", 4},
		{"no match: default route", "hello", nil, "default", -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			route, rule := r.Route(c.message, c.context)
			if route != c.route || rule != c.rule {
				t.Fatalf("Route(%q) = %s, %d; want %s, %d", c.message, route, rule, c.route, c.rule)
			}
		})
	}
}

func TestParseRuleRejects(t *testing.T) {
	cases := []struct {
		name, rule, want string
	}{
		{"no arrow", "keyword refund agent", "want"},
		{"unknown route", "keyword refund => human", "route"},
		{"unknown kind", "regex x => agent", "kind"},
		{"no argument", "keyword => agent", "no argument"},
		{"no word", "keyword ?!| => agent", "no word"},
		{"bad pattern", "pattern ( => qa", "pattern"},
		{"long pattern", "pattern " + strings.Repeat("a", router.MaxPatternBytes+1) + " => qa", "longer"},
		{"complex pattern", "pattern [a-z]{1,1000} => qa", "complex"},
		{"context without value", "context channel => agent", "field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := router.ParseRule(c.rule)
			if errs.KindOf(err) != errs.KindInvalid || !strings.Contains(errs.PublicMessage(err, ""), c.want) {
				t.Fatalf("ParseRule(%q) = %v; want invalid mentioning %q", c.rule, err, c.want)
			}
		})
	}
	if _, err := router.New(nil, "human"); errs.KindOf(err) != errs.KindInvalid {
		t.Fatalf("New with a bad default = %v", err)
	}
}
