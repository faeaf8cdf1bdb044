package toolpolicy_test

import (
	"testing"

	"github.com/catsrv/catsrv/core/chat/toolpolicy"
)

func TestDecideFirstMatchWins(t *testing.T) {
	p, err := toolpolicy.New([]string{"crm/delete_* => ask", "files/* => allow", "* => deny"})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"crm/delete_user": toolpolicy.Ask, "crm/list": toolpolicy.Deny, "files/read": toolpolicy.Allow,
		"knowledge_search": toolpolicy.Deny, "files/a/b": toolpolicy.Allow,
	} {
		if got, _ := p.Decide(key); got != want {
			t.Errorf("%s: %s, want %s", key, got, want)
		}
	}
	if got, pat := (toolpolicy.Policy{}).Decide("x/y"); got != toolpolicy.Allow || pat != "" {
		t.Errorf("no rules: %s %q, want allow", got, pat)
	}
}

func TestParseRefusesBadRules(t *testing.T) {
	for _, bad := range []string{"", "files/*", "files/* => maybe", " => allow", "a b => deny", "x => "} {
		if _, err := toolpolicy.Parse(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	r, err := toolpolicy.Parse("  crm/* =>ask ")
	if err != nil || r.Pattern != "crm/*" || r.Decision != toolpolicy.Ask {
		t.Errorf("got %+v %v", r, err)
	}
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"*", "", true}, {"*", "a/b", true}, {"a?c", "abc", true}, {"a?c", "ac", false},
		{"a*b*c", "axxbyyc", true}, {"a*b*c", "axxbyy", false}, {"crm/delete_*", "crm/delete_", true},
		{"crm/delete_*", "crm/list", false}, {"é?", "éü", true}, {"**a", "ba", true},
	} {
		if got := toolpolicy.Match(c.p, c.s); got != c.want {
			t.Errorf("Match(%q, %q) = %v", c.p, c.s, got)
		}
	}
}

// FuzzParse: a rule either is refused or decides exactly the keys its
// pattern matches, and matching never panics or hangs on any input.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"crm/delete_* => ask", "* => deny", "a=>allow", "=>", "x => y"} {
		f.Add(s, "crm/delete_x")
	}
	f.Fuzz(func(t *testing.T, rule, key string) {
		r, err := toolpolicy.Parse(rule)
		if err != nil {
			return
		}
		if r.Decision != toolpolicy.Allow && r.Decision != toolpolicy.Ask && r.Decision != toolpolicy.Deny {
			t.Fatalf("rule %q parsed to decision %q", rule, r.Decision)
		}
		d, pattern := toolpolicy.Policy{r}.Decide(key)
		if toolpolicy.Match(r.Pattern, key) {
			if d != r.Decision || pattern != r.Pattern {
				t.Fatalf("%q matches %q but decides %q", rule, key, d)
			}
		} else if d != toolpolicy.Allow || pattern != "" {
			t.Fatalf("%q does not match %q but decides %q", rule, key, d)
		}
	})
}
