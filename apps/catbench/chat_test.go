package main

import (
	"context"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/adapters/files/knowledge"
	"github.com/catsrv/catsrv/core/chat/legacy"
)

// minScore is the legacy pipeline's default cat.legacy.min_score, which
// the bench CATs keep.
const minScore = 0.5

// The message kinds must be what they claim, or the measured mix is not
// the advertised one: checked against the real legacy stages and the
// knowledge file the bench CATs use when run from the repository.
func TestChatMessagesMatchTheirKind(t *testing.T) {
	kb, err := knowledge.New("../../configs").Knowledge(context.Background(), "knowledge/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	answered := func(msg string) bool {
		hits := kb.Search(msg)
		return len(hits) > 0 && hits[0].Relevance >= minScore
	}
	for kind, msgs := range chatMessages {
		for _, msg := range msgs {
			t.Run(kind+"/"+msg, func(t *testing.T) {
				_, greeting := legacy.Greeting(msg)
				switch kind {
				case "greeting":
					if !greeting {
						t.Errorf("%q is not recognised as a greeting", msg)
					}
				case "kb":
					if greeting || !answered(msg) {
						t.Errorf("%q: greeting %v, answered by the knowledge base %v; want an answer", msg, greeting, answered(msg))
					}
				case "intent", "unknown":
					if greeting || answered(msg) {
						t.Errorf("%q: greeting %v, answered by the knowledge base %v; want neither", msg, greeting, answered(msg))
					}
				default:
					t.Errorf("kind %q has no weight in chatMix", kind)
				}
			})
		}
	}
}

// The knowledge file written outside the repository must load.
func TestWriteKnowledgeFallbackLoads(t *testing.T) {
	dir := t.TempDir() // the test runs in apps/catbench: no configs/knowledge here
	rel, err := writeKnowledge(dir)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := knowledge.New(dir).Knowledge(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	if kb.Len() == 0 || len(kb.Intents()) == 0 {
		t.Errorf("fallback knowledge: %d entries, %d intents; want some of each", kb.Len(), len(kb.Intents()))
	}
}

func TestNextMessage(t *testing.T) {
	tests := []struct {
		name         string
		conversation string
	}{
		{"no conversation yet: never continues", ""},
		{"with a conversation: continues some", "c1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &chatUser{conversation: tt.conversation, rng: newUserRand(3)}
			seen, continued := map[string]bool{}, 0
			for range 1000 {
				msg, conv := u.nextMessage()
				seen[msg] = true
				switch conv {
				case "":
				case tt.conversation:
					continued++
				default:
					t.Fatalf("continued unknown conversation %q", conv)
				}
			}
			if tt.conversation == "" && continued != 0 {
				t.Errorf("continued %d chats without a conversation", continued)
			}
			if tt.conversation != "" && (continued == 0 || continued == 1000) {
				t.Errorf("continued %d of 1000 chats; want a share", continued)
			}
			for kind, msgs := range chatMessages {
				if !seen[msgs[0]] {
					t.Errorf("kind %s never drawn", kind)
				}
			}
		})
	}
}

func TestChatRow(t *testing.T) {
	tests := []struct {
		name string
		chat *chatStats
		want []string
	}{
		{"not measured", nil, []string{"not measured in this run"}},
		{"all stored", &chatStats{users: 32, chats: 10, warmUps: 2, stored: 12, storedOK: true, byModel: map[string]int{"qa": 10}},
			[]string{"32 users", "+12 for 12 chats", "| met |", "qa 10"}},
		{"lost chats", &chatStats{users: 32, chats: 10, warmUps: 2, stored: 11, byModel: map[string]int{}},
			[]string{"+11 for 12 chats", "**missed**"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := (&report{chat: tt.chat}).chatRow()
			for _, w := range tt.want {
				if !strings.Contains(row, w) {
					t.Errorf("row %q lacks %q", row, w)
				}
			}
		})
	}
}
