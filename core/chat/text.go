package chat

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokens splits text into lower-case words: runs of letters, digits and
// marks. Scripts written without spaces come out as one token per run,
// which is enough for the offline stages' keyword matching.
func Tokens(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
}

// MaxNameRunes is about how long a name derived from a message gets.
const MaxNameRunes = 60

// NameFrom names a new conversation after its first message: whitespace
// collapsed, cut at a word boundary to at most MaxNameRunes runes (with
// "…"), and a word longer than that cut hard.
func NameFrom(message string) string {
	name := strings.Join(strings.Fields(message), " ")
	if utf8.RuneCountInString(name) <= MaxNameRunes {
		return name
	}
	runes := []rune(name)
	cut := runes[:MaxNameRunes]
	if i := lastSpace(cut); i > 0 && runes[MaxNameRunes] != ' ' {
		cut = cut[:i]
	}
	return strings.TrimRight(string(cut), " ") + "…"
}

func lastSpace(rs []rune) int {
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i] == ' ' {
			return i
		}
	}
	return -1
}
