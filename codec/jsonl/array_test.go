package jsonl_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/catsrv/catsrv/codec/jsonl"
	"github.com/catsrv/catsrv/core/errs"
)

func decodeArray(t *testing.T, input string) []jsonl.Line {
	t.Helper()
	var out []jsonl.Line
	for l := range jsonl.DecodeArray(strings.NewReader(input)) {
		out = append(out, l)
	}
	return out
}

func TestDecodeArray(t *testing.T) {
	withID := with("interaction_id", `"id-1"`)
	lines := decodeArray(t, " [\n"+validLine+",\n"+with("time", `"never"`)+", "+withID+"]\n ")
	if len(lines) != 3 {
		t.Fatalf("got %d elements, want 3: %+v", len(lines), lines)
	}
	if lines[0].No != 1 || lines[0].Err != nil || !same(lines[0].Interaction, validInteraction) {
		t.Errorf("element 1: %+v", lines[0])
	}
	if lines[1].No != 2 || errs.KindOf(lines[1].Err) != errs.KindInvalid || !strings.Contains(lines[1].Err.Error(), "field time") {
		t.Errorf("element 2: %+v", lines[1])
	}
	want := validInteraction
	want.InteractionID = "id-1"
	if lines[2].No != 3 || lines[2].Err != nil || !same(lines[2].Interaction, want) {
		t.Errorf("element 3: %+v", lines[2])
	}
	if got := decodeArray(t, "[]"); len(got) != 0 {
		t.Errorf("empty array: %+v", got)
	}
}

func TestDecodeArrayRefusesWhatIsNotOneArray(t *testing.T) {
	for _, input := range []string{"", validLine, "[" + validLine, "[" + validLine + "] []", "[" + validLine + ",]", `"x"`, "[1,"} {
		lines := decodeArray(t, input)
		if len(lines) == 0 {
			t.Errorf("%q: no error", input)
			continue
		}
		last := lines[len(lines)-1]
		if errs.KindOf(last.Err) != errs.KindInvalid {
			t.Errorf("%q: last element %+v, want an invalid-input error", input, last)
		}
	}
}

func TestInteractionIDRoundTrip(t *testing.T) {
	i := validInteraction
	i.InteractionID = "ext-42"
	var again []jsonl.Line
	for l := range jsonl.Decode(bytes.NewReader(jsonl.AppendLine(nil, i))) {
		again = append(again, l)
	}
	if len(again) != 1 || again[0].Err != nil || again[0].Interaction.InteractionID != "ext-42" {
		t.Fatalf("written and read back: %+v", again)
	}
	long := with("interaction_id", `"`+strings.Repeat("x", 257)+`"`)
	for l := range jsonl.Decode(strings.NewReader(long)) {
		if errs.KindOf(l.Err) != errs.KindInvalid || !strings.Contains(l.Err.Error(), "interaction_id") {
			t.Errorf("a 257-byte interaction_id: %+v", l)
		}
	}
}

// FuzzDecodeArray decodes any body as the ingestion route does for
// application/json (make fuzz). It must not panic; element numbers rise;
// every element is an interaction the stores accept, equal to what the
// same object decodes to as a JSON Lines line, or an error of kind invalid
// or too large with a message a client may see.
func FuzzDecodeArray(f *testing.F) {
	for _, s := range []string{
		"[" + validLine + "]", "[" + validLine + "," + validLine + "]", "[]", " [ ] ",
		"[" + with("interaction_id", `"a"`) + "]", "[" + with("time", `1`) + "]", "[" + validLine,
		"[1,2]", "[null]", `{"a":1}`, "[[[[", "[" + validLine + "]x", "[\"\xff\"]", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		last := 0
		for line := range jsonl.DecodeArray(bytes.NewReader(input)) {
			if line.No < last || line.No < 1 {
				t.Fatalf("element %d after %d", line.No, last)
			}
			last = line.No
			if line.Err != nil {
				kind := errs.KindOf(line.Err)
				msg := errs.PublicMessage(line.Err, "")
				if (kind != errs.KindInvalid && kind != errs.KindTooLarge) || msg == "" || !utf8.ValidString(msg) {
					t.Fatalf("element %d: error %v of kind %v, message %q", line.No, line.Err, kind, msg)
				}
				continue
			}
			if err := line.Interaction.Validate(); err != nil {
				t.Fatalf("element %d decoded to an interaction the stores refuse: %v", line.No, err)
			}
			var again []jsonl.Line
			for l := range jsonl.Decode(bytes.NewReader(jsonl.AppendLine(nil, line.Interaction))) {
				again = append(again, l)
			}
			if len(again) != 1 || again[0].Err != nil || !same(again[0].Interaction, line.Interaction) {
				t.Fatalf("element %d: %+v written and read back is %+v", line.No, line.Interaction, again)
			}
		}
	})
}

func TestDecodeForFillsOnlyAMissingCat(t *testing.T) {
	noCat := strings.Replace(validLine, `"cat":"demo",`, "", 1)
	other := with("cat", `"other"`)
	var got []string
	for l := range jsonl.DecodeFor(strings.NewReader(noCat+"\n"+other+"\n"), "shop") {
		got = append(got, l.Interaction.Cat)
	}
	for l := range jsonl.DecodeArrayFor(strings.NewReader("["+noCat+","+other+"]"), "shop") {
		got = append(got, l.Interaction.Cat)
	}
	if want := []string{"shop", "other", "shop", "other"}; !slices.Equal(got, want) {
		t.Fatalf("CATs %q, want %q", got, want)
	}
	for l := range jsonl.Decode(strings.NewReader(noCat)) {
		if l.Err == nil || !strings.Contains(l.Err.Error(), "missing field: cat") {
			t.Fatalf("Decode of a line without cat: %+v", l)
		}
	}
}

// TestDecodeArrayReaderFailure: a failing input ends the elements with a
// ReadFailed line, not with an error about the JSON.
func TestDecodeArrayReaderFailure(t *testing.T) {
	broken := errors.New("connection reset")
	input := io.MultiReader(strings.NewReader("["+validLine+","), iotest.ErrReader(broken))
	var lines []jsonl.Line
	for l := range jsonl.DecodeArray(input) {
		lines = append(lines, l)
	}
	if len(lines) != 2 || lines[0].Err != nil || lines[1].No != jsonl.ReadFailed || !errors.Is(lines[1].Err, broken) {
		t.Fatalf("got %+v", lines)
	}
}
