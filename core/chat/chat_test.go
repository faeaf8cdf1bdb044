package chat_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

func TestNameFrom(t *testing.T) {
	long := strings.Repeat("word ", 20)
	cases := []struct{ name, message, want string }{
		{"short, whitespace collapsed", "  How do   I\nreset it?  ", "How do I reset it?"},
		{"exactly sixty", strings.Repeat("a", 60), strings.Repeat("a", 60)},
		{"cut at a word boundary", long, strings.TrimSpace(strings.Repeat("word ", 12)) + "…"},
		{"boundary falls on a space", strings.Repeat("abcd ", 12) + "tail", strings.TrimSpace(strings.Repeat("abcd ", 12)) + "…"},
		{"one long word cut hard", strings.Repeat("x", 70), strings.Repeat("x", 60) + "…"},
		{"runes, not bytes", strings.Repeat("é", 61), strings.Repeat("é", 60) + "…"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := chat.NameFrom(c.message)
			if got != c.want {
				t.Fatalf("NameFrom = %q, want %q", got, c.want)
			}
			if utf8.RuneCountInString(got) > chat.MaxNameRunes+1 {
				t.Fatalf("name %q too long", got)
			}
		})
	}
}

func TestCursorRoundTrip(t *testing.T) {
	c := chat.Conversation{ID: "c:1", UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}
	cur, err := chat.ParseCursor(chat.CursorOf(c))
	if err != nil || cur.ID != "c:1" || !cur.UpdatedAt.Equal(c.UpdatedAt) {
		t.Fatalf("ParseCursor = %+v, %v", cur, err)
	}
	for _, bad := range []string{"!!", "bm9jb2xvbg", "eDp5"} {
		if _, err := chat.ParseCursor(bad); errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("ParseCursor(%q) = %v, want invalid", bad, err)
		}
	}
}

func TestListPage(t *testing.T) {
	me, other := chat.Owner{Cat: "demo", UserID: "u1"}, chat.Owner{Cat: "demo", UserID: "u2"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var all []chat.Conversation
	for i := range 5 {
		all = append(all, chat.Conversation{ID: fmt.Sprintf("c%d", i), Owner: me, UpdatedAt: t0.Add(time.Duration(i/2) * time.Hour)})
	}
	all = append(all, chat.Conversation{ID: "x", Owner: other, UpdatedAt: t0.Add(9 * time.Hour)})
	var ids []string
	page := chat.Page{Limit: 2}
	for range 10 {
		p, err := chat.ListPage(all, me, page)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Conversations {
			ids = append(ids, c.ID)
		}
		if p.Next == "" {
			break
		}
		page.After = p.Next
	}
	if want := []string{"c4", "c3", "c2", "c1", "c0"}; !slices.Equal(ids, want) {
		t.Fatalf("pages = %v, want %v", ids, want)
	}
	for _, limit := range []int{-1, chat.MaxLimit + 1} {
		if _, err := chat.ListPage(all, me, chat.Page{Limit: limit}); errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("limit %d: %v, want invalid", limit, err)
		}
	}
}

func TestCheckID(t *testing.T) {
	for _, id := range []string{"0123abcd", "c:1", "ünïcode", strings.Repeat("x", 300)} {
		if err := chat.CheckID(id); err != nil {
			t.Errorf("CheckID(%q) = %v, want nil", id, err)
		}
	}
	for _, id := range []string{"abc\x00x", "\x00", "abc\xffx", "\x80", "caf\xc3"} {
		if err := chat.CheckID(id); errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("CheckID(%q) = %v, want invalid", id, err)
		}
	}
}

// A cursor is decoded from base64, so it can carry any bytes: one whose
// id is not storable text is refused like any other foreign cursor.
func TestCursorWithAnUnstorableID(t *testing.T) {
	for _, id := range []string{"abc\x00x", "abc\xffx"} {
		c := chat.Conversation{ID: id, UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}
		if _, err := chat.ParseCursor(chat.CursorOf(c)); errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("ParseCursor of id %q = %v, want invalid", id, err)
		}
		if _, err := chat.ListPage(nil, chat.Owner{}, chat.Page{After: chat.CursorOf(c)}); errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("ListPage after id %q = %v, want invalid", id, err)
		}
	}
}

func TestSearchTerms(t *testing.T) {
	cases := []struct {
		name, q string
		want    []string
	}{
		{"words lower-cased", "Reset PASSWORD!", []string{"reset", "password"}},
		{"no word", " ?! ", nil},
		{"too long", strings.Repeat("a", chat.MaxQueryBytes+1), nil},
		{"too many words", strings.Repeat("a ", chat.MaxQueryTerms+1), nil},
		{"NUL byte", "reset\x00password", nil},
		{"not UTF-8", "reset \xffpassword", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := chat.SearchTerms(c.q)
			if c.want == nil {
				if errs.KindOf(err) != errs.KindInvalid {
					t.Fatalf("SearchTerms = %v, %v; want invalid", got, err)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("SearchTerms = %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat("filler ", 40) + "the refund arrived " + strings.Repeat("tail ", 40)
	cases := []struct {
		name, text string
		check      func(string) bool
	}{
		{"short text whole", "a  refund", func(s string) bool { return s == "a refund" }},
		{"window around the term", long, func(s string) bool {
			return strings.Contains(s, "refund") && strings.HasPrefix(s, "…") && strings.HasSuffix(s, "…") && utf8.RuneCountInString(s) <= chat.SnippetRunes+2
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := chat.Snippet(c.text, []string{"refund"}); !c.check(got) {
				t.Fatalf("Snippet = %q", got)
			}
		})
	}
}
