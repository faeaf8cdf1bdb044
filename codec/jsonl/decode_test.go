package jsonl_test

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/codec/jsonl"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

const validLine = `{"time":"2025-03-01T10:00:00Z","cat":"demo","event_kind":"api","question":"q","answer":"a","topic":"t","model":"m","persona":"p"}`

var validInteraction = analytics.Interaction{
	Time: time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC), Cat: "demo", EventKind: "api",
	Question: "q", Answer: "a", Topic: "t", Model: "m", Persona: "p",
}

// with returns validLine with one field's value replaced, or the field
// added ("field":value).
func with(field, value string) string {
	old := regexp.MustCompile(`"` + field + `":"[^"]*"`)
	if old.MatchString(validLine) {
		return old.ReplaceAllLiteralString(validLine, `"`+field+`":`+value)
	}
	return strings.TrimSuffix(validLine, "}") + `,"` + field + `":` + value + `}`
}

// padded returns a valid line of exactly n bytes, padded in an unknown field.
func padded(n int) string {
	base := with("pad", `""`)
	return with("pad", `"`+strings.Repeat("x", n-len(base))+`"`)
}

type wantLine struct {
	no   int
	err  string // substring of the error; "" for a valid line
	kind errs.Kind
}

func collect(r io.Reader) []jsonl.Line {
	var out []jsonl.Line
	for l := range jsonl.Decode(r) {
		out = append(out, l)
	}
	return out
}

func TestDecode(t *testing.T) {
	bad := errs.KindInvalid
	tests := []struct {
		name  string
		input string
		want  []wantLine
	}{
		{"one valid line", validLine + "\n", []wantLine{{no: 1}}},
		{"last line without a line end", validLine + "\n" + validLine, []wantLine{{no: 1}, {no: 2}}},
		{"blank lines are skipped but counted", "\n  \n" + validLine + "\n\t\r\n\n" + validLine + "\n\n", []wantLine{{no: 3}, {no: 6}}},
		{"CRLF line ends", validLine + "\r\n" + validLine + "\r\n", []wantLine{{no: 1}, {no: 2}}},
		{"byte order mark", "\xef\xbb\xbf" + validLine + "\n", []wantLine{{no: 1}}},
		{"empty input", "", nil},
		{"unknown fields are ignored", with("extra", `{"a":[1,2,{"b":null}]}`), []wantLine{{no: 1}}},
		{"bad JSON", `{"time":"2025-03-01T10:00:00Z",` + "\n" + validLine, []wantLine{{no: 1, err: "bad JSON", kind: bad}, {no: 2}}},
		{"trailing garbage", validLine + "x", []wantLine{{no: 1, err: "bad JSON", kind: bad}}},
		{"not an object", `["a"]`, []wantLine{{no: 1, err: "want an object, got array", kind: bad}}},
		{"wrong type", with("question", "5"), []wantLine{{no: 1, err: "field question: want a string, got number", kind: bad}}},
		{"wrong type of time", with("time", "true"), []wantLine{{no: 1, err: "field time: want a string, got bool", kind: bad}}},
		{"missing time", `{"cat":"demo","event_kind":"api","question":"q","answer":"a","topic":"t","model":"m","persona":"p"}`,
			[]wantLine{{no: 1, err: "missing field: time", kind: bad}}},
		{"null time", with("time", "null"), []wantLine{{no: 1, err: "missing field: time", kind: bad}}},
		{"date without time", with("time", `"2025-03-01"`), []wantLine{{no: 1, err: `field time: "2025-03-01" is not an RFC 3339 time`, kind: bad}}},
		{"time without zone", with("time", `"2025-03-01T10:00:00"`), []wantLine{{no: 1, err: "is not an RFC 3339 time", kind: bad}}},
		{"missing persona", `{"time":"2025-03-01T10:00:00Z","cat":"demo","event_kind":"api","question":"q","answer":"a","topic":"t","model":"m"}`,
			[]wantLine{{no: 1, err: "missing field: persona", kind: bad}}},
		{"blank question", with("question", `"  "`), []wantLine{{no: 1, err: "missing field: question", kind: bad}}},
		{"NUL byte", with("answer", `"a\u0000b"`), []wantLine{{no: 1, err: "field answer contains a NUL byte", kind: bad}}},
		{"field too long", with("topic", `"`+strings.Repeat("t", analytics.MaxFieldBytes+1)+`"`),
			[]wantLine{{no: 1, err: "field topic is longer than", kind: bad}}},
		{"line of exactly the limit", padded(jsonl.MaxLineBytes) + "\r\n", []wantLine{{no: 1}}},
		{"line one byte over the limit", padded(jsonl.MaxLineBytes+1) + "\n" + validLine,
			[]wantLine{{no: 1, err: "line is longer than 1048576 bytes", kind: errs.KindTooLarge}, {no: 2}}},
		{"2 MiB line between valid ones", validLine + "\n" + padded(2<<20) + "\n" + validLine + "\n",
			[]wantLine{{no: 1}, {no: 2, err: "line is longer than", kind: errs.KindTooLarge}, {no: 3}}},
		{"2 MiB line at the end without a line end", validLine + "\n" + padded(2<<20),
			[]wantLine{{no: 1}, {no: 2, err: "line is longer than", kind: errs.KindTooLarge}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := collect(strings.NewReader(tt.input))
			if len(got) != len(tt.want) {
				t.Fatalf("got %d lines, want %d: %+v", len(got), len(tt.want), got)
			}
			for k, w := range tt.want {
				g := got[k]
				if g.No != w.no {
					t.Errorf("line %d: No = %d, want %d", k, g.No, w.no)
				}
				if w.err == "" {
					if g.Err != nil {
						t.Errorf("line %d: unexpected error %v", w.no, g.Err)
					} else if !g.Interaction.Time.Equal(validInteraction.Time) || g.Interaction.Question != "q" || g.Interaction.Persona != "p" {
						t.Errorf("line %d: interaction = %+v", w.no, g.Interaction)
					}
					continue
				}
				if g.Err == nil || !strings.Contains(g.Err.Error(), w.err) {
					t.Errorf("line %d: error = %v, want it to contain %q", w.no, g.Err, w.err)
				}
				if errs.KindOf(g.Err) != w.kind {
					t.Errorf("line %d: kind = %v, want %v", w.no, errs.KindOf(g.Err), w.kind)
				}
			}
		})
	}
}

func TestDecodeFields(t *testing.T) {
	line := `{"persona":"p","model":"m","topic":"t","answer":"a","question":"q","event_kind":"api","cat":"demo",` +
		`"time":"2025-03-01T12:00:00.5+02:00","question_id":"qid","answer_id":"aid","user_id":"u1","conversation_id":"c1"}`
	got := collect(strings.NewReader(line))
	if len(got) != 1 || got[0].Err != nil {
		t.Fatalf("got %+v", got)
	}
	want := validInteraction
	want.Time = time.Date(2025, 3, 1, 10, 0, 0, 5e8, time.UTC)
	want.QuestionID, want.AnswerID, want.UserID, want.ConversationID = "qid", "aid", "u1", "c1"
	i := got[0].Interaction
	if !i.Time.Equal(want.Time) {
		t.Errorf("time = %v, want %v", i.Time, want.Time)
	}
	i.Time = want.Time
	if i != want {
		t.Errorf("interaction = %+v\nwant %+v", i, want)
	}
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

func TestDecodeReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	tests := []struct {
		name   string
		before string
		valid  int
	}{
		{"after whole lines", validLine + "\n" + validLine + "\n", 2},
		{"in the middle of a line", validLine + "\n" + validLine[:20], 1},
		{"in the middle of a long line", validLine + "\n" + padded(200<<10), 1},
		{"at once", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := collect(io.MultiReader(strings.NewReader(tt.before), failingReader{boom}))
			if len(got) != tt.valid+1 {
				t.Fatalf("got %d lines, want %d valid and the failure: %+v", len(got), tt.valid, got)
			}
			for _, l := range got[:tt.valid] {
				if l.Err != nil {
					t.Errorf("line %d: %v", l.No, l.Err)
				}
			}
			last := got[tt.valid]
			if last.No != jsonl.ReadFailed || !errors.Is(last.Err, boom) {
				t.Errorf("last line = %+v, want No %d and the reader's error", last, jsonl.ReadFailed)
			}
		})
	}
}

func TestDecodeStopsWhenAsked(t *testing.T) {
	input := strings.Repeat(validLine+"\n", 10)
	n := 0
	for l := range jsonl.Decode(strings.NewReader(input)) {
		n++
		if l.No == 3 {
			break
		}
	}
	if n != 3 {
		t.Errorf("saw %d lines after breaking at line 3", n)
	}
}

func ExampleDecode() {
	input := validLine + "\n\n" + `{"time":"yesterday"}` + "\n"
	for l := range jsonl.Decode(strings.NewReader(input)) {
		if l.Err != nil {
			fmt.Printf("line %d: %v\n", l.No, l.Err)
			continue
		}
		fmt.Printf("line %d: %s asked %q\n", l.No, l.Interaction.Persona, l.Interaction.Question)
	}
	// Output:
	// line 1: p asked "q"
	// line 3: field time: "yesterday" is not an RFC 3339 time such as 2025-01-31T09:30:00Z
}
