package main

import (
	"testing"

	"github.com/catsrv/catsrv/adapters/files/catfiles"
	"github.com/catsrv/catsrv/adapters/files/knowledge"
)

// TestShippedConfiguration keeps the demo CAT that `make run` serves
// loadable, with a knowledge base that answers a question offline.
func TestShippedConfiguration(t *testing.T) {
	t.Parallel()
	cats, err := catfiles.Load("../../configs", nil)
	if err != nil {
		t.Fatal(err)
	}
	demo, err := cats.Cat(t.Context(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	if demo.Chat.Legacy.KnowledgeBase == "" {
		t.Fatal("the demo CAT names no knowledge base")
	}
	kb, err := knowledge.New("../../configs").Knowledge(t.Context(), demo.Chat.Legacy.KnowledgeBase)
	if err != nil {
		t.Fatal(err)
	}
	hits := kb.Search("How can I reset my password?")
	if len(hits) == 0 || hits[0].Entry.ID != "reset-password" {
		t.Fatalf("best match %+v, want reset-password", hits)
	}
}
