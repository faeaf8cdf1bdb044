package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// maxName is the longest tool name OpenAI's API takes.
const maxName = 64

// namer names a CAT's tools "<server>__<tool>" under OpenAI's rules
// ([a-zA-Z0-9_-], at most 64 bytes): other bytes become "_", a long name
// is cut, and a name already given gets a hash of the original pair, so
// every tool keeps a name of its own. Names depend only on the servers'
// and tools' order, so Tools and Call agree.
type namer struct{ taken map[string]bool }

// name returns the name of server's tool.
func (n *namer) name(server, tool string) string {
	if n.taken == nil {
		n.taken = map[string]bool{}
	}
	base := sanitize(server + "__" + tool)
	name := cut(base, maxName)
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	for i := 0; n.taken[name]; i++ {
		suffix := "_" + hex.EncodeToString(sum[:4])
		if i > 0 {
			suffix += strconv.Itoa(i)
		}
		name = cut(base, maxName-len(suffix)) + suffix
	}
	n.taken[name] = true
	return name
}

// sanitize replaces every byte outside [a-zA-Z0-9_-] with "_".
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// cut returns s's first n bytes (s is ASCII after sanitize).
func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
