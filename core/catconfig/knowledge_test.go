package catconfig

import (
	"strings"
	"testing"
)

func TestKnowledgeDefaultsValid(t *testing.T) {
	c := Defaults("demo")
	k := c.Chat.Knowledge
	if k.ChunkTokens != 500 || k.TopK != 4 || k.MinScore != DefaultMinScore || k.Documents != "" || k.Embeddings.BaseURL != "" {
		t.Errorf("defaults %+v", k)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestKnowledgeValidation(t *testing.T) {
	for _, c := range []struct {
		set  func(*Knowledge)
		want string
	}{
		{func(k *Knowledge) { k.Documents = "../docs" }, "cat.knowledge.documents"},
		{func(k *Knowledge) { k.Documents = "/etc" }, "cat.knowledge.documents"},
		{func(k *Knowledge) { k.Embeddings.BaseURL = "ftp://x" }, "cat.knowledge.embeddings.base_url"},
		{func(k *Knowledge) { k.Embeddings.BaseURL = "http://u:p@x" }, "cat.knowledge.embeddings.base_url"},
		{func(k *Knowledge) { k.Embeddings.BaseURL = "http://x/v1" }, "cat.knowledge.embeddings.model"},
		{func(k *Knowledge) { k.ChunkTokens = 10 }, "cat.knowledge.chunk_tokens: 10 is not between 50 and 8000"},
		{func(k *Knowledge) { k.TopK = 0 }, "cat.knowledge.top_k"},
		{func(k *Knowledge) { k.MinScore = 1.5 }, "cat.knowledge.min_score"},
	} {
		cfg := Defaults("demo")
		c.set(&cfg.Chat.Knowledge)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", cfg.Chat.Knowledge, err, c.want)
		}
	}
	ok := Defaults("demo")
	ok.Chat.Knowledge.Documents = "docs/demo"
	ok.Chat.Knowledge.Embeddings = Embeddings{BaseURL: "http://127.0.0.1:8080/v1", Model: "m"}
	if err := ok.Validate(); err != nil {
		t.Error(err)
	}
}
