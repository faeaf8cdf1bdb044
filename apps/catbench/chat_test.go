package main

import (
	"context"
	"strings"
	"testing"
	"time"

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

func TestChatTargetRows(t *testing.T) {
	one := &chatStats{users: 32, instances: 1, chats: 100, perSec: 900, p50: 20 * time.Millisecond, p99: 90 * time.Millisecond}
	three := &chatStats{users: 32, instances: 3, chats: 100, warmUps: 32, stored: 132, storedOK: true, perSec: 950}
	tests := []struct {
		name string
		rep  report
		want []string
	}{
		{"sqlite has none", report{backend: "sqlite", chat: one}, nil},
		{"one met, three not measured", report{backend: "postgres", chat: one},
			[]string{"chat, 1 instance, 32 users | ≥ 800 chats/s, p99 ≤ 100 ms | 900.0 chats/s", "| met |", "several instances on one database | ≥ 1000 chats/s | not measured"}},
		{"three missed", report{backend: "postgres", chat: one, chatMulti: three, multiRSS: []int64{64 << 20, 65 << 20, 66 << 20}},
			[]string{"chat, 3 instances on one database, 32 users | ≥ 1000 chats/s | 950.0 chats/s", "all stored", "instance peak RSS 64, 65, 66 MiB) | **missed** |"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := tt.rep.chatTargetRows()
			if tt.want == nil && rows != "" {
				t.Errorf("rows %q, want none", rows)
			}
			for _, w := range tt.want {
				if !strings.Contains(rows, w) {
					t.Errorf("rows %q lack %q", rows, w)
				}
			}
		})
	}
}
