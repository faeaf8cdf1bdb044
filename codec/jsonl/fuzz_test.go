package jsonl_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/catsrv/catsrv/codec/jsonl"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// FuzzDecode decodes any input as `catsrv import` does (make fuzz). It
// must not panic; every line is either an interaction the stores accept
// (Validate passes) that survives a write and a read unchanged, or an
// error of kind invalid or too large with a message a client may see;
// line numbers rise.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		validLine, validLine + "\n" + validLine + "\r\n\n  \n" + validLine,
		"\xef\xbb\xbf" + validLine, with("question", `"a\u0000b"`), with("question", "\"a\xffb\""),
		with("topic", `"\ud800"`), with("time", `"2025-13-01T10:00:00Z"`), with("time", `"`+strings.Repeat("é", 30)+`"`),
		with("time", `1`), with("cat", `null`), with("model", `{"a":1}`), with("persona", `"   "`),
		with("Question", `"other"`), with("conversation_id", `"c\u0000"`),
		with("input_tokens", `12`) + "", with("output_tokens", `-1`), with("input_tokens", `1.5`), with("input_tokens", `"7"`),
		with("latency_ms", `1e400`), with("latency_ms", `-0.0`), with("first_token_ms", `null`), with("cost_usd", `0.000125`),
		with("feedback", `{"rating":"up","reason":"helpful"}`), with("feedback", `{"rating":"sideways"}`),
		with("feedback", `{"reason":"x"}`), with("feedback", `"up"`), with("Feedback", `{"rating":"down","comment":"\u00e9"}`),
		`{}`, `[]`, `null`, `"x"`, `{"time":`, "\x00", "\n\n\n", validLine[:40], strings.Repeat("{", 100),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		last := 0
		for line := range jsonl.Decode(bytes.NewReader(input)) {
			if line.No <= last {
				t.Fatalf("line %d after line %d", line.No, last)
			}
			last = line.No
			if line.Err != nil {
				kind := errs.KindOf(line.Err)
				msg := errs.PublicMessage(line.Err, "")
				if (kind != errs.KindInvalid && kind != errs.KindTooLarge) || msg == "" || !utf8.ValidString(msg) {
					t.Fatalf("line %d: error %v of kind %v, message %q", line.No, line.Err, kind, msg)
				}
				continue
			}
			i := line.Interaction
			if err := i.Validate(); err != nil {
				t.Fatalf("line %d decoded to an interaction the stores refuse: %v", line.No, err)
			}
			var again []jsonl.Line
			for l := range jsonl.Decode(bytes.NewReader(jsonl.AppendLine(nil, i))) {
				again = append(again, l)
			}
			if len(again) != 1 || again[0].Err != nil || !same(again[0].Interaction, i) {
				t.Fatalf("line %d: %+v written and read back is %+v", line.No, i, again)
			}
		}
	})
}

// same reports whether two interactions are equal, their times as
// instants (a time read with an offset is written back in UTC).
func same(a, b analytics.Interaction) bool {
	if !a.Time.Equal(b.Time) {
		return false
	}
	return a.Equal(b)
}
