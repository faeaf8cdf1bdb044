package mcp

import (
	"regexp"
	"strings"
	"testing"
)

var openAIName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestNames(t *testing.T) {
	var n namer
	long := strings.Repeat("t", 80)
	cases := []struct{ server, tool, want string }{
		{"files", "read_file", "files__read_file"},
		{"files", "read.file", "files__read_file"},            // sanitized, and taken: hashed
		{"files", "read file", "files__read_file"},            // the same, again
		{"crm", "lookup-ü", "crm__lookup-_"},                  // a rune is one "_"
		{"crm", long, "crm__" + long[:64-len("crm__")]},       // cut
		{"crm", long + "x", "crm__" + long[:64-len("crm__")]}, // cut, taken: hashed
	}
	seen := map[string]bool{}
	for _, c := range cases {
		got := n.name(c.server, c.tool)
		if !openAIName.MatchString(got) {
			t.Errorf("name(%q, %q) = %q breaks OpenAI's rules", c.server, c.tool, got)
		}
		if seen[got] {
			t.Errorf("name(%q, %q) = %q given twice", c.server, c.tool, got)
		}
		seen[got] = true
		if !seenBefore(c, cases) && got != c.want {
			t.Errorf("name(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
		if seenBefore(c, cases) && (got == c.want || !strings.HasPrefix(got, c.want[:min(len(c.want), 40)])) {
			t.Errorf("name(%q, %q) = %q, want %q's prefix with a hash", c.server, c.tool, got, c.want)
		}
	}
	// The same order gives the same names.
	var again namer
	for _, c := range cases {
		if got := again.name(c.server, c.tool); !seen[got] {
			t.Errorf("second naming gave %q, not given the first time", got)
		}
	}
}

// seenBefore reports whether an earlier case wants the same name as c.
func seenBefore(c struct{ server, tool, want string }, cases []struct{ server, tool, want string }) bool {
	for _, o := range cases {
		if o == c {
			return false
		}
		if o.want == c.want {
			return true
		}
	}
	return false
}

// FuzzName: whatever a server calls its tools, each gets a name of its
// own under OpenAI's rules.
func FuzzName(f *testing.F) {
	f.Add("files", "read_file", "read.file")
	f.Add("a", strings.Repeat("x", 100), strings.Repeat("x", 101))
	f.Add("crm", "", "\x00")
	f.Fuzz(func(t *testing.T, server, tool1, tool2 string) {
		var n namer
		a, b, c := n.name(server, tool1), n.name(server, tool2), n.name(server, tool1+tool2)
		for _, got := range []string{a, b, c} {
			if !openAIName.MatchString(got) {
				t.Fatalf("name %q breaks OpenAI's rules", got)
			}
		}
		if a == b || a == c || b == c {
			t.Fatalf("names %q, %q, %q are not unique", a, b, c)
		}
	})
}
