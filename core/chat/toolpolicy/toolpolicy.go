// Package toolpolicy is the agent's tool policy (cat.agent.tools): rules
// "<pattern> => allow|ask|deny", the first whose pattern matches a tool
// deciding, no match allowing. A pattern matches an MCP tool as
// "<server>/<tool>" and a built-in tool by its name alone; '*' matches any
// run of characters ('/' included), '?' any one character.
package toolpolicy

import (
	"strings"

	"github.com/catsrv/catsrv/core/errs"
)

// Decisions a rule can make.
const (
	Allow = "allow"
	Ask   = "ask"
	Deny  = "deny"
)

// Rule is one parsed policy rule.
type Rule struct {
	Pattern  string
	Decision string
}

// maxPattern bounds a pattern, so matching stays cheap.
const maxPattern = 200

// Parse reads one rule, "<pattern> => allow|ask|deny".
func Parse(s string) (Rule, error) {
	pattern, decision, ok := strings.Cut(s, "=>")
	pattern, decision = strings.TrimSpace(pattern), strings.TrimSpace(decision)
	switch {
	case !ok:
		return Rule{}, errs.New(errs.KindInvalid, "%q: want \"<server>/<tool pattern> => allow|ask|deny\"", s)
	case pattern == "" || len(pattern) > maxPattern || strings.ContainsAny(pattern, " \t\r\n"):
		return Rule{}, errs.New(errs.KindInvalid, "%q: the pattern must be 1-%d characters without spaces", s, maxPattern)
	case decision != Allow && decision != Ask && decision != Deny:
		return Rule{}, errs.New(errs.KindInvalid, "%q: the decision must be allow, ask or deny", s)
	}
	return Rule{Pattern: pattern, Decision: decision}, nil
}

// Policy is a parsed list of rules.
type Policy []Rule

// New parses every rule; the first bad one is the error.
func New(rules []string) (Policy, error) {
	p := make(Policy, 0, len(rules))
	for _, s := range rules {
		r, err := Parse(s)
		if err != nil {
			return nil, err
		}
		p = append(p, r)
	}
	return p, nil
}

// Key is what patterns match: "<server>/<tool>", or a built-in's name
// (server empty).
func Key(server, tool string) string {
	if server == "" {
		return tool
	}
	return server + "/" + tool
}

// Decide returns the decision of the first rule matching key, and the
// rule's pattern ("" when none matched: allow).
func (p Policy) Decide(key string) (decision, pattern string) {
	for _, r := range p {
		if Match(r.Pattern, key) {
			return r.Decision, r.Pattern
		}
	}
	return Allow, ""
}

// Match reports whether pattern matches all of s ('*' any run of runes,
// '?' one rune).
func Match(pattern, s string) bool {
	p, t := []rune(pattern), []rune(s)
	// Iterative wildcard matching with one backtrack point: linear in
	// practice, quadratic at worst in the (bounded) lengths.
	pi, ti, star, mark := 0, 0, -1, 0
	for ti < len(t) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == t[ti]):
			pi++
			ti++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ti
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			ti = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
