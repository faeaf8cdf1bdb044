package legacy_test

import (
	"math"
	"slices"
	"testing"

	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/chat/legacy"
	"github.com/catsrv/catsrv/core/errs"
)

func TestGreeting(t *testing.T) {
	cases := []struct {
		name, message, want string // want "" means not a greeting
	}{
		{"english", "Hello!", "Hello! How can I help you today?"},
		{"english two words", "good morning", "Hello! How can I help you today?"},
		{"english with filler", "hi there", "Hello! How can I help you today?"},
		{"french", "Bonjour à tous", "Bonjour ! Comment puis-je vous aider ?"},
		{"german", "Guten Tag", "Hallo! Wie kann ich Ihnen helfen?"},
		{"spanish accented", "¡Buenos días!", "¡Hola! ¿En qué puedo ayudarte?"},
		{"italian", "ciao", "Ciao! Come posso aiutarti?"},
		{"portuguese", "Olá", "Olá! Como posso ajudar?"},
		{"russian", "Привет", "Здравствуйте! Чем могу помочь?"},
		{"japanese", "こんにちは", "こんにちは！何かお手伝いできることはありますか？"},
		{"chinese", "你好！", "你好！有什么可以帮您？"},
		{"greeting then a question", "Hello, how do I reset my password?", ""},
		{"question", "what are your opening hours", ""},
		{"greeting word later", "say hello", ""},
		{"empty", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := legacy.Greeting(c.message)
			if ok != (c.want != "") || got != c.want {
				t.Fatalf("Greeting(%q) = %q, %v; want %q", c.message, got, ok, c.want)
			}
		})
	}
}

func tinyKB(t *testing.T) *legacy.Knowledge {
	t.Helper()
	k, err := legacy.NewKnowledge([]legacy.Entry{
		{ID: "e1", Question: "Reset password", Answer: "Use the reset link."},
		{ID: "e2", Question: "Change password email", Answer: "Go to settings."},
		{ID: "e3", Question: "Opening hours", Answer: "9 to 5."},
	}, []legacy.Intent{
		{Name: "billing", Keywords: []string{"invoice", "refund"}, Answer: "Billing is handled by billing@example.com."},
		{Name: "account", Examples: []string{"I cannot log in to my account", "reset my password please"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSearchBM25 checks scores computed by hand from the Okapi formula:
// N=3 questions of 2, 3 and 2 words (avgdl 7/3), k1=1.2, b=0.75;
// idf(reset) = ln(1+2.5/1.5), idf(password) = ln(1+1.5/2.5).
func TestSearchBM25(t *testing.T) {
	k := tinyKB(t)
	cases := []struct {
		name   string
		query  string
		ids    []string
		scores []float64
	}{
		{"two terms rank the exact question first", "how do I reset my password?", []string{"e1", "e2"}, []float64{1.5408845783975804, 0.42081720292932145}},
		{"rarer term wins", "hours", []string{"e3"}, []float64{math.Log(1+2.5/1.5) * 2.2 / (1 + 1.2*(0.25+0.75*2/(7.0/3)))}},
		{"no shared word", "weather tomorrow", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hits := k.Search(c.query)
			if len(hits) != len(c.ids) {
				t.Fatalf("Search(%q) = %+v, want ids %v", c.query, hits, c.ids)
			}
			for i, h := range hits {
				if h.Entry.ID != c.ids[i] || math.Abs(h.Score-c.scores[i]) > 1e-9 {
					t.Errorf("hit %d = %s %.12f, want %s %.12f", i, h.Entry.ID, h.Score, c.ids[i], c.scores[i])
				}
			}
		})
	}
}

func TestNewKnowledgeRejects(t *testing.T) {
	cases := []struct {
		name    string
		entries []legacy.Entry
		intents []legacy.Intent
	}{
		{"missing id", []legacy.Entry{{Question: "q", Answer: "a"}}, nil},
		{"duplicate id", []legacy.Entry{{ID: "x", Question: "q", Answer: "a"}, {ID: "x", Question: "r", Answer: "b"}}, nil},
		{"no answer", []legacy.Entry{{ID: "x", Question: "q"}}, nil},
		{"question without words", []legacy.Entry{{ID: "x", Question: "?!", Answer: "a"}}, nil},
		{"intent without name", nil, []legacy.Intent{{Keywords: []string{"k"}}}},
		{"intent without examples or keywords", nil, []legacy.Intent{{Name: "n"}}},
		{"duplicate intent", nil, []legacy.Intent{{Name: "n", Keywords: []string{"a"}}, {Name: "n", Keywords: []string{"b"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := legacy.NewKnowledge(c.entries, c.intents); errs.KindOf(err) != errs.KindInvalid {
				t.Fatalf("err = %v, want kind invalid", err)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	p := legacy.New(tinyKB(t), "default", 1)
	cases := []struct {
		name, message, want string
	}{
		{"keyword", "I need a refund", "billing"},
		{"multi-keyword beats example", "refund my invoice for my account", "billing"},
		{"close to an example", "I can't log in to my account", "account"},
		{"too little overlap", "my cat is cute", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, ok := p.Classify(c.message)
			if ok != (c.want != "") || in.Name != c.want {
				t.Fatalf("Classify(%q) = %q, %v; want %q", c.message, in.Name, ok, c.want)
			}
		})
	}
}

func TestRun(t *testing.T) {
	k := tinyKB(t)
	all := []string{"greeting", "intent", "qa", "default"}
	cases := []struct {
		name     string
		minScore float64
		stages   []string
		message  string
		want     legacy.Result
	}{
		{"greeting answers", 0.5, all, "hi", legacy.Result{Answer: "Hello! How can I help you today?", Model: "greeting"}},
		{"greeting stage not configured", 0.5, []string{"qa", "default"}, "hi", legacy.Result{Answer: "fallback", Model: "default"}},
		{"intent with an answer", 0.5, all, "refund please", legacy.Result{Answer: "Billing is handled by billing@example.com.", Model: "intent", Topic: "billing"}},
		{"intent names the topic, qa answers", 0.5, all, "reset my password please", legacy.Result{
			Answer: "Use the reset link.", Model: "qa", Topic: "account",
			Sources: []chat.Source{{ID: "e1", Question: "Reset password", Score: 1}}, // e2 scores 0.19
		}},
		// relevance of "password" to e1: idf(password)/(idf(reset)+idf(password)) = 0.324
		{"below the threshold: default", 0.5, all, "password please", legacy.Result{Answer: "fallback", Model: "default", Topic: "account"}},
		{"no default stage still answers", 0.5, []string{"greeting"}, "what now", legacy.Result{Answer: "fallback", Model: "default"}},
		{"one stage alone", 0.1, []string{"qa"}, "password", legacy.Result{
			Answer: "Use the reset link.", Model: "qa",
			Sources: []chat.Source{
				{ID: "e1", Question: "Reset password", Score: math.Log(1.6) / (math.Log(1+2.5/1.5) + math.Log(1.6))},
				{ID: "e2", Question: "Change password email", Score: math.Log(1.6) / (2*math.Log(1+2.5/1.5) + math.Log(1.6))},
			},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := legacy.New(k, "fallback", c.minScore).Run(c.message, c.stages)
			if got.Answer != c.want.Answer || got.Model != c.want.Model || got.Topic != c.want.Topic || len(got.Sources) != len(c.want.Sources) {
				t.Fatalf("Run = %+v, want %+v", got, c.want)
			}
			for i, s := range got.Sources {
				w := c.want.Sources[i]
				if s.ID != w.ID || s.Question != w.Question || math.Abs(s.Score-w.Score) > 1e-9 {
					t.Errorf("source %d = %+v, want %+v", i, s, w)
				}
			}
		})
	}
}

func TestEmptyKnowledgeAnswersOffline(t *testing.T) {
	got := legacy.New(nil, "fallback", 1).Run("reset password", []string{"intent", "qa", "default"})
	if got.Model != "default" || got.Answer != "fallback" || !slices.Equal(got.Sources, nil) {
		t.Fatalf("Run = %+v", got)
	}
}

// The qa stage answers from the documents' best passage, cited, only when
// no entry reaches the threshold; other stages never ask for documents.
func TestQAAnswersFromDocuments(t *testing.T) {
	k, err := legacy.NewKnowledge([]legacy.Entry{{ID: "hours", Question: "What are your opening hours?", Answer: "9 to 5."}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	docs := func(string) []chat.Source {
		calls++
		return []chat.Source{{Kind: chat.SourceDocument, ID: "d1", ChunkID: "d1-0", Snippet: "Hold the button for ten seconds.", Score: 0.9}}
	}
	p := legacy.New(k, "default", 0.5).WithDocuments(docs)
	stages := []string{legacy.StageGreeting, legacy.StageQA, legacy.StageDefault}
	if r := p.Run("What are your opening hours?", stages); r.Answer != "9 to 5." || calls != 0 || r.Sources[0].Kind != chat.SourceKB {
		t.Errorf("entry: %+v, %d document calls", r, calls)
	}
	if r := p.Run("hello", stages); r.Model != legacy.StageGreeting || calls != 0 {
		t.Errorf("greeting: %+v, %d document calls", r, calls)
	}
	r := p.Run("how do I reset the widget", stages)
	if r.Model != legacy.StageQA || r.Answer != "Hold the button for ten seconds. [1]" || len(r.Sources) != 1 || r.Sources[0].ChunkID != "d1-0" || calls != 1 {
		t.Errorf("document: %+v", r)
	}
	none := legacy.New(k, "default", 0.5).WithDocuments(func(string) []chat.Source { return nil })
	if r := none.Run("how do I reset the widget", stages); r.Model != legacy.StageDefault || len(r.Sources) != 0 {
		t.Errorf("no passage: %+v", r)
	}
}

// The qa stage decides by the knowledge base's threshold alone, never by
// comparing scores across the two (an entry's relevance and a passage's
// score are on different scales): an entry at or above min_score answers
// even when a passage would score 1, and an entry that matches but stays
// below it gives way to the passage, whatever the passage's score.
func TestQAChoosesByTheEntryThreshold(t *testing.T) {
	k, err := legacy.NewKnowledge([]legacy.Entry{
		{ID: "hours", Question: "What are your opening hours?", Answer: "9 to 5."},
		{ID: "reset", Question: "How do I reset my password on the website?", Answer: "Use the forgot password link."},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	docs := func(string) []chat.Source {
		calls++
		return []chat.Source{{Kind: chat.SourceDocument, ID: "d1", ChunkID: "d1-0", Snippet: "Hold the button for ten seconds.", Score: 1}}
	}
	const threshold = 0.5
	p := legacy.New(k, "default", threshold).WithDocuments(docs)
	stages := []string{legacy.StageQA, legacy.StageDefault}

	full := "How do I reset my password on the website?"
	if hits := k.Search(full); len(hits) == 0 || hits[0].Relevance < threshold {
		t.Fatalf("the entry's own question: %+v", hits)
	}
	if r := p.Run(full, stages); r.Answer != "Use the forgot password link." || calls != 0 {
		t.Errorf("an entry at the threshold must answer, documents unasked: %+v, %d calls", r, calls)
	}

	partial := "where is the reset button on the hub"
	hits := k.Search(partial)
	if len(hits) == 0 || hits[0].Entry.ID != "reset" || hits[0].Relevance <= 0 || hits[0].Relevance >= threshold {
		t.Fatalf("want a matching entry below the threshold, got %+v", hits)
	}
	r := p.Run(partial, stages)
	if r.Answer != "Hold the button for ten seconds. [1]" || calls != 1 || len(r.Sources) != 1 || r.Sources[0].Kind != chat.SourceDocument {
		t.Errorf("an entry below the threshold must give way to the passage: %+v", r)
	}
}
