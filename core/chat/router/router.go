// Package router decides where a message of the custom chat mode goes:
// rules from cat.custom.rules, tried in order, the first match winning,
// else the default route. A route is a whole mode (legacy, agent) or one
// legacy stage.
//
// A rule is one line "<kind> <argument> => <route>":
//
//	keyword refund|invoice|billing => agent      any of the words, case-insensitive
//	pattern ^(?i)where is my order => qa          a Go (RE2) regular expression
//	context channel=voice => legacy               a context field equals the value
package router

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

// Routes names every route a rule may choose.
var Routes = []string{"legacy", "agent", "greeting", "intent", "qa", "default"}

// Bounds on a pattern, so configuration cannot make routing slow or huge.
// RE2 matching is linear, but its program still grows with repetition.
const (
	MaxPatternBytes = 256
	MaxPatternInsts = 2000
)

// Rule kinds.
const (
	KindKeyword = "keyword"
	KindPattern = "pattern"
	KindContext = "context"
)

// Rule is one parsed routing rule.
type Rule struct {
	Kind     string
	Route    string
	keywords [][]string
	pattern  *regexp.Regexp
	field    string
	value    string
}

// ParseRule reads one rule; a malformed one is errs.KindInvalid saying why.
func ParseRule(text string) (Rule, error) {
	i := strings.LastIndex(text, "=>")
	if i < 0 {
		return Rule{}, errs.New(errs.KindInvalid, "want \"<kind> <argument> => <route>\", got %q", clip(text))
	}
	head, route := strings.TrimSpace(text[:i]), strings.TrimSpace(text[i+2:])
	if !slices.Contains(Routes, route) {
		return Rule{}, errs.New(errs.KindInvalid, "route %q is not one of %s", clip(route), strings.Join(Routes, ", "))
	}
	kind, arg, _ := strings.Cut(head, " ")
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return Rule{}, errs.New(errs.KindInvalid, "rule %q has no argument", clip(text))
	}
	r := Rule{Kind: kind, Route: route}
	switch kind {
	case KindKeyword:
		for w := range strings.SplitSeq(arg, "|") {
			if tokens := chat.Tokens(w); len(tokens) > 0 {
				r.keywords = append(r.keywords, tokens)
			}
		}
		if len(r.keywords) == 0 {
			return Rule{}, errs.New(errs.KindInvalid, "keyword rule %q has no word", clip(text))
		}
	case KindPattern:
		p, err := compileBounded(arg)
		if err != nil {
			return Rule{}, err
		}
		r.pattern = p
	case KindContext:
		field, value, ok := strings.Cut(arg, "=")
		if !ok || strings.TrimSpace(field) == "" {
			return Rule{}, errs.New(errs.KindInvalid, "context rule %q: want <field>=<value>", clip(text))
		}
		r.field, r.value = strings.TrimSpace(field), strings.TrimSpace(value)
	default:
		return Rule{}, errs.New(errs.KindInvalid, "kind %q is not one of keyword, pattern, context", clip(kind))
	}
	return r, nil
}

func compileBounded(expr string) (*regexp.Regexp, error) {
	if len(expr) > MaxPatternBytes {
		return nil, errs.New(errs.KindInvalid, "pattern is longer than %d bytes", MaxPatternBytes)
	}
	parsed, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, errs.New(errs.KindInvalid, "pattern %q: %v", expr, err)
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil || len(prog.Inst) > MaxPatternInsts {
		return nil, errs.New(errs.KindInvalid, "pattern %q is too complex (more than %d instructions)", expr, MaxPatternInsts)
	}
	return regexp.Compile(expr)
}

// Matches reports whether the rule applies to the message and its context.
func (r Rule) Matches(message string, context map[string]any) bool {
	switch r.Kind {
	case KindKeyword:
		tokens := chat.Tokens(message)
		return slices.ContainsFunc(r.keywords, func(kw []string) bool { return containsRun(tokens, kw) })
	case KindPattern:
		return r.pattern.MatchString(message)
	case KindContext:
		v, ok := context[r.field]
		return ok && scalar(v) == r.value
	}
	return false
}

// containsRun reports whether the words appear consecutively in tokens.
func containsRun(tokens, words []string) bool {
	for i := 0; i+len(words) <= len(tokens); i++ {
		if slices.Equal(tokens[i:i+len(words)], words) {
			return true
		}
	}
	return false
}

// scalar spells a JSON scalar as a rule's value is written; objects and
// lists never equal a value.
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		return strconv.Itoa(x)
	case nil:
		return "null"
	}
	return fmt.Sprintf("\x00%T", v) // matches no configured value
}

// Router holds the parsed rules of one CAT.
type Router struct {
	rules []Rule
	def   string
}

// New parses the rules and checks the default route.
func New(rules []string, defaultRoute string) (*Router, error) {
	if !slices.Contains(Routes, defaultRoute) {
		return nil, errs.New(errs.KindInvalid, "default route %q is not one of %s", clip(defaultRoute), strings.Join(Routes, ", "))
	}
	r := &Router{def: defaultRoute}
	for i, text := range rules {
		rule, err := ParseRule(text)
		if err != nil {
			return nil, errs.New(errs.KindInvalid, "rule %d: %s", i+1, errs.PublicMessage(err, "invalid"))
		}
		r.rules = append(r.rules, rule)
	}
	return r, nil
}

// Route returns the route of the first matching rule and its index, or
// the default route and -1.
func (r *Router) Route(message string, context map[string]any) (route string, rule int) {
	for i, rule := range r.rules {
		if rule.Matches(message, context) {
			return rule.Route, i
		}
	}
	return r.def, -1
}

// clip bounds how much of configuration text an error repeats.
func clip(s string) string {
	const n = 80
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
