package jsonl_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/codec/jsonl"
	"github.com/catsrv/catsrv/core/analytics"
)

// alphabet mixes what escaping must get right: quotes, backslashes, control
// characters, multi-byte runes, the JavaScript line separators and a space.
var alphabet = []rune("aZ9 \"\\/\n\r\t\x01\x1f\x7féß日本😀\u2028\u2029<>&'{}:,")

func randomText(r *rand.Rand, required bool) string {
	n := r.IntN(12)
	if !required && r.IntN(3) == 0 {
		return ""
	}
	var b strings.Builder
	if required {
		b.WriteRune('x') // never blank
	}
	for range n {
		b.WriteRune(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

func randomInteraction(r *rand.Rand) analytics.Interaction {
	zone := time.FixedZone("", (r.IntN(27)-12)*3600+r.IntN(2)*1800)
	sec := r.Int64N(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Unix())
	ns := int64(0)
	switch r.IntN(3) {
	case 1:
		ns = r.Int64N(1000) * 1e6
	case 2:
		ns = r.Int64N(1e9)
	}
	return analytics.Interaction{
		Time:           time.Unix(sec, ns).In(zone),
		Cat:            randomText(r, true),
		EventKind:      randomText(r, true),
		Question:       randomText(r, true),
		Answer:         randomText(r, true),
		Topic:          randomText(r, true),
		Model:          randomText(r, true),
		Persona:        randomText(r, true),
		QuestionID:     randomText(r, false),
		AnswerID:       randomText(r, false),
		UserID:         randomText(r, false),
		ConversationID: randomText(r, false),
		Usage:          randomUsage(r),
		Feedback:       randomFeedback(r),
	}
}

// randomUsage returns a usage with each field set or not.
func randomUsage(r *rand.Rand) analytics.Usage {
	var u analytics.Usage
	if r.IntN(2) == 0 {
		u.InputTokens, u.OutputTokens = r.Int64N(1<<40), r.Int64N(5000)
	}
	if r.IntN(2) == 0 {
		u.CostUSD = r.Float64() * 3
	}
	if r.IntN(2) == 0 {
		u.LatencyMS = analytics.MS(r.Float64() * 1e5)
	}
	if r.IntN(3) == 0 {
		u.FirstTokenMS = analytics.MS(float64(r.IntN(900)))
	}
	return u
}

// randomFeedback returns no feedback, or a rating with or without a
// reason and a comment.
func randomFeedback(r *rand.Rand) analytics.Feedback {
	switch r.IntN(4) {
	case 0:
		return analytics.Feedback{}
	case 1:
		return analytics.Feedback{Rating: analytics.RatingUp}
	}
	return analytics.Feedback{Rating: analytics.RatingDown, Reason: randomText(r, false), Comment: randomText(r, false)}
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var buf bytes.Buffer
	var want []analytics.Interaction
	for range 3000 {
		i := randomInteraction(r)
		if err := jsonl.Encode(&buf, i); err != nil {
			t.Fatalf("Encode(%+v): %v", i, err)
		}
		want = append(want, i)
	}
	if got := bytes.Count(buf.Bytes(), []byte{'\n'}); got != len(want) {
		t.Fatalf("wrote %d line ends for %d interactions: a newline escaped badly", got, len(want))
	}
	k := 0
	for l := range jsonl.Decode(&buf) {
		if l.Err != nil {
			t.Fatalf("line %d: %v", l.No, l.Err)
		}
		if l.No != k+1 {
			t.Fatalf("line number %d, want %d", l.No, k+1)
		}
		w := want[k]
		if !l.Interaction.Time.Equal(w.Time) || l.Interaction.Time.Location() != time.UTC {
			t.Errorf("line %d: time %v, want %v in UTC", l.No, l.Interaction.Time, w.Time)
		}
		if got := l.Interaction; !got.Equal(w) {
			t.Errorf("line %d:\n got %+v\nwant %+v", l.No, got, w)
		}
		k++
	}
	if k != len(want) {
		t.Errorf("decoded %d lines, want %d", k, len(want))
	}
}

// TestEncodeIsJSON checks the hand-written escaping against encoding/json,
// independently of Decode.
func TestEncodeIsJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		i := randomInteraction(r)
		line := jsonl.AppendLine(nil, i)
		var raw map[string]any
		if err := json.Unmarshal(line, &raw); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		m := map[string]string{}
		for k, v := range raw {
			if s, ok := v.(string); ok {
				m[k] = s
			}
		}
		if fb, ok := raw["feedback"].(map[string]any); ok && (fb["rating"] != i.Feedback.Rating || (fb["reason"] != nil && fb["reason"] != i.Feedback.Reason)) {
			t.Errorf("feedback = %v, want %+v", fb, i.Feedback)
		}
		for name, value := range map[string]string{
			"cat": i.Cat, "question": i.Question, "answer": i.Answer, "question_id": i.QuestionID, "conversation_id": i.ConversationID,
		} {
			if m[name] != value {
				t.Errorf("%s = %q, want %q", name, m[name], value)
			}
		}
		if want := i.Time.UTC().Format(time.RFC3339Nano); m["time"] != want {
			t.Errorf("time = %q, want %q", m["time"], want)
		}
	}
}

func TestEncodeFormat(t *testing.T) {
	tests := []struct {
		name string
		in   analytics.Interaction
		want string
	}{
		{"optional fields left out", validInteraction, validLine + "\n"},
		{"optional fields written in order", func() analytics.Interaction {
			i := validInteraction
			i.ConversationID, i.UserID, i.QuestionID = "c", "u", "q1"
			return i
		}(), strings.TrimSuffix(validLine, "}") + `,"question_id":"q1","user_id":"u","conversation_id":"c"}` + "\n"},
		{"time in UTC with nanoseconds", func() analytics.Interaction {
			i := validInteraction
			i.Time = time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.FixedZone("", 2*3600))
			return i
		}(), strings.Replace(validLine, "10:00:00Z", "10:00:00.123456789Z", 1) + "\n"},
		{"escapes", func() analytics.Interaction {
			i := validInteraction
			i.Question = "say \"hi\"\\\n\t\x01 <ok> é"
			return i
		}(), strings.Replace(validLine, `"question":"q"`, `"question":"say \"hi\"\\\n\t\u0001 <ok> é"`, 1) + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := jsonl.Encode(&buf, tt.in); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tt.want {
				t.Errorf("got  %s\nwant %s", buf.String(), tt.want)
			}
			if got := string(jsonl.AppendLine([]byte("prefix"), tt.in)); got != "prefix"+tt.want {
				t.Errorf("AppendLine = %s", got)
			}
		})
	}
}

func TestEncodeRefusesWhatDecodeRefuses(t *testing.T) {
	tests := []struct {
		name string
		edit func(*analytics.Interaction)
	}{
		{"missing persona", func(i *analytics.Interaction) { i.Persona = "" }},
		{"NUL byte", func(i *analytics.Interaction) { i.Answer = "a\x00" }},
		{"invalid UTF-8", func(i *analytics.Interaction) { i.Question = "\xff" }},
		{"zero time", func(i *analytics.Interaction) { i.Time = time.Time{} }},
		{"year 10000", func(i *analytics.Interaction) { i.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := validInteraction
			tt.edit(&i)
			var buf bytes.Buffer
			if err := jsonl.Encode(&buf, i); err == nil {
				t.Errorf("Encode accepted it and wrote %q", buf.String())
			}
			if buf.Len() != 0 {
				t.Errorf("Encode wrote %q", buf.String())
			}
		})
	}
}

func TestAppendLineReplacesInvalidUTF8(t *testing.T) {
	i := validInteraction
	i.Question = "a\xffb"
	var m map[string]string
	if err := json.Unmarshal(jsonl.AppendLine(nil, i), &m); err != nil {
		t.Fatal(err)
	}
	if m["question"] != "a\ufffdb" {
		t.Errorf("question = %q", m["question"])
	}
}
