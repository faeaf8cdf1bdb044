package demo_test

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/apps/catsrv/internal/demo"
	"github.com/catsrv/catsrv/codec/jsonl"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

var end = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)

func generate(t testing.TB, opts demo.Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := demo.Generate(&buf, opts); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sample is one generated data set, decoded, shared by the tests that
// only read it.
func sample(t *testing.T) []analytics.Interaction {
	t.Helper()
	out := generate(t, demo.Options{Interactions: 20000, Cats: []string{"demo", "shop", "help-desk"}, Days: 14, Seed: 7, End: end})
	var is []analytics.Interaction
	for l := range jsonl.Decode(bytes.NewReader(out)) {
		if l.Err != nil {
			t.Fatalf("line %d: %v", l.No, l.Err)
		}
		if l.No != len(is)+1 {
			t.Fatalf("line %d follows %d lines: blank lines in the output", l.No, len(is))
		}
		is = append(is, l.Interaction)
	}
	if len(is) != 20000 {
		t.Fatalf("%d lines, want 20000", len(is))
	}
	return is
}

func TestDeterministic(t *testing.T) {
	opts := demo.Options{Interactions: 3000, Cats: []string{"a", "b"}, Days: 3, Seed: 42, End: end}
	first, second := generate(t, opts), generate(t, opts)
	if !bytes.Equal(first, second) {
		t.Error("the same options gave different bytes")
	}
	opts.Seed = 43
	if bytes.Equal(first, generate(t, opts)) {
		t.Error("another seed gave the same bytes")
	}
}

func TestFormatIsJSONLEncode(t *testing.T) {
	out := generate(t, demo.Options{Interactions: 2000, Cats: []string{"demo"}, Days: 2, Seed: 1, End: end})
	var again bytes.Buffer
	for l := range jsonl.Decode(bytes.NewReader(out)) {
		if l.Err != nil {
			t.Fatalf("line %d: %v", l.No, l.Err)
		}
		if err := jsonl.Encode(&again, l.Interaction); err != nil {
			t.Fatalf("line %d: %v", l.No, err)
		}
	}
	if !bytes.Equal(out, again.Bytes()) {
		t.Error("re-encoding the decoded lines with jsonl.Encode gives other bytes")
	}
}

func TestShape(t *testing.T) {
	is := sample(t)
	cats := map[string]int{}
	kinds := map[string]int{}
	askedTemplate := map[string]int{} // question text -> count, one-offs excluded
	questionIDs := map[string]map[string]bool{}
	answerIDs := map[string]map[string]bool{}
	conversations := map[string]analytics.Interaction{}
	explicit, oneOffs := 0, 0
	answers := map[string]bool{}
	for k, i := range is {
		cats[i.Cat]++
		kinds[i.EventKind]++
		answers[i.Answer] = true
		if !i.Time.Before(end) || i.Time.Before(end.AddDate(0, 0, -14)) {
			t.Fatalf("line %d: time %v outside the 14 days before %v", k+1, i.Time, end)
		}
		if k > 0 && i.Time.Before(is[k-1].Time) {
			t.Fatalf("line %d: time %v before the previous line's %v", k+1, i.Time, is[k-1].Time)
		}
		if i.UserID == "" || i.ConversationID == "" {
			t.Fatalf("line %d: no user or conversation", k+1)
		}
		if c, seen := conversations[i.ConversationID]; seen && (c.UserID != i.UserID || c.Cat != i.Cat || c.Persona != i.Persona || c.Model != i.Model) {
			t.Fatalf("line %d: conversation %s changed user, CAT, persona or model", k+1, i.ConversationID)
		}
		conversations[i.ConversationID] = i
		if strings.Contains(i.Question, "#1") { // one-offs carry an order number
			oneOffs++
		} else {
			askedTemplate[i.Question]++
		}
		if i.QuestionID != "" || i.AnswerID != "" {
			explicit++
		}
		addTo(questionIDs, i.Question, i.QuestionID)
		addTo(answerIDs, i.Answer, i.AnswerID)
	}
	n := float64(len(is))

	t.Run("every CAT and no other", func(t *testing.T) {
		if len(cats) != 3 || cats["demo"] == 0 || cats["shop"] == 0 || cats["help-desk"] == 0 {
			t.Errorf("CATs %v", cats)
		}
		if cats["demo"] <= cats["help-desk"] {
			t.Errorf("the first CAT should be the busiest: %v", cats)
		}
	})
	t.Run("about 90% api events", func(t *testing.T) {
		if share := float64(kinds["api"]) / n; share < 0.88 || share > 0.92 {
			t.Errorf("api share %.3f", share)
		}
		for _, k := range []string{"feedback", "ui_click", "error"} {
			if kinds[k] == 0 {
				t.Errorf("no %s events: %v", k, kinds)
			}
		}
	})
	t.Run("about 5% one-off questions, each unique", func(t *testing.T) {
		if share := float64(oneOffs) / n; share < 0.04 || share > 0.06 {
			t.Errorf("one-off share %.3f", share)
		}
	})
	t.Run("distinct texts within the vocabulary", func(t *testing.T) {
		if d := len(askedTemplate); d < 2000 || d > 10000 {
			t.Errorf("%d distinct template questions in 20000 lines, want 2000 to 10000", d)
		}
		if len(answers) > 2000 || len(answers) < 500 {
			t.Errorf("%d distinct answers, want at most 2000 (and many)", len(answers))
		}
		if len(questionIDs) != len(askedTemplate)+oneOffs {
			t.Errorf("%d distinct questions, want %d templates + %d unique one-offs", len(questionIDs), len(askedTemplate), oneOffs)
		}
	})
	t.Run("Zipf skew", func(t *testing.T) {
		counts := make([]int, 0, len(askedTemplate))
		for _, c := range askedTemplate {
			counts = append(counts, c)
		}
		slices.Sort(counts)
		top, median := counts[len(counts)-1], counts[len(counts)/2]
		if top < 50*median {
			t.Errorf("top question asked %d times, median %d: not skewed", top, median)
		}
	})
	t.Run("explicit ids on a small share, stable per text", func(t *testing.T) {
		if share := float64(explicit) / n; share < 0.005 || share > 0.2 {
			t.Errorf("explicit id share %.3f", share)
		}
		for text, ids := range questionIDs {
			if len(ids) != 1 {
				t.Errorf("question %q has ids %v", text, ids)
			}
		}
		for text, ids := range answerIDs {
			if len(ids) != 1 {
				t.Errorf("answer %q has ids %v", text, ids)
			}
		}
	})
	t.Run("topics, models and personas", func(t *testing.T) {
		for _, d := range []analytics.Dimension{analytics.Topic, analytics.Model, analytics.Persona} {
			seen := map[string]bool{}
			for _, i := range is {
				seen[i.Key(d)] = true
			}
			if want := map[analytics.Dimension]int{analytics.Topic: 8, analytics.Model: 4, analytics.Persona: 4}[d]; len(seen) != want {
				t.Errorf("%s: %d values %v, want %d", d, len(seen), seen, want)
			}
		}
	})
}

func addTo(m map[string]map[string]bool, text, id string) {
	if m[text] == nil {
		m[text] = map[string]bool{}
	}
	m[text][id] = true
}

func TestOptionsChecked(t *testing.T) {
	ok := demo.Options{Interactions: 10, Cats: []string{"demo"}, Days: 1, End: end}
	tests := []struct {
		name string
		edit func(*demo.Options)
	}{
		{"negative count", func(o *demo.Options) { o.Interactions = -1 }},
		{"no CAT", func(o *demo.Options) { o.Cats = nil }},
		{"bad CAT name", func(o *demo.Options) { o.Cats = []string{"../x"} }},
		{"CAT twice", func(o *demo.Options) { o.Cats = []string{"a", "a"} }},
		{"zero days", func(o *demo.Options) { o.Days = 0 }},
		{"too many days", func(o *demo.Options) { o.Days = demo.MaxDays + 1 }},
		{"no end", func(o *demo.Options) { o.End = time.Time{} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := ok
			tt.edit(&o)
			var buf bytes.Buffer
			if err := demo.Generate(&buf, o); errs.KindOf(err) != errs.KindInvalid || buf.Len() != 0 {
				t.Errorf("error %v, wrote %d bytes", err, buf.Len())
			}
		})
	}
	if out := generate(t, demo.Options{Cats: []string{"demo"}, Days: 1, End: end}); len(out) != 0 {
		t.Errorf("zero interactions wrote %q", out)
	}
}

type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestWriteError(t *testing.T) {
	err := demo.Generate(brokenWriter{}, demo.Options{Interactions: 100000, Cats: []string{"demo"}, Days: 1, End: end})
	if err == nil || !strings.Contains(err.Error(), "closed pipe") {
		t.Errorf("error = %v, want the writer's", err)
	}
}

func BenchmarkGenerate(b *testing.B) {
	const n = 100000
	opts := demo.Options{Interactions: n, Cats: []string{"demo", "shop"}, Days: 30, Seed: 1, End: end}
	for b.Loop() {
		if err := demo.Generate(io.Discard, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
