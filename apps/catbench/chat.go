package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// chatRoute is the pseudo route `--routes` matches to select the chat
// measurement.
const chatRoute = "/chat"

// chatStats are the chat measurement: throughput, latency and whether
// every chat was stored.
type chatStats struct {
	users     int
	instances int     // servers the users were spread over
	chats     int     // answered chats in the timed part
	perSec    float64 // chats per second
	p50, p99  time.Duration
	continued int            // chats that continued an earlier conversation
	byModel   map[string]int // which legacy stage answered
	stored    int64          // growth of /metrics/total_interactions over the run, warm-up included
	warmUps   int            // chats sent before the timed part
	storedOK  bool           // stored == chats + warmUps
	cutShort  bool           // the budget ran out before all chats were sent
}

func (s chatStats) short() string {
	return fmt.Sprintf("p50 %8s  p99 %8s  %7.1f chats/s  (%d chats, %d users, %d continued; stored +%d, %s)",
		ms(s.p50), ms(s.p99), s.perSec, s.chats, s.users, s.continued, s.stored, storedVerdict(s.storedOK))
}

func storedVerdict(ok bool) string {
	if ok {
		return "all stored"
	}
	return "NOT all stored"
}

// chatMessages is the message mix: questions the knowledge base answers
// (worded as users do), greetings, messages only an intent recognises,
// and questions nobody answers (the default answer). Weights are in
// chatMix.
var chatMessages = map[string][]string{
	"kb": {
		"How do I reset my password?", "how can i reset my password", "Where can I track my order?",
		"How long does delivery take?", "How do I return an item?", "When will I get my refund?",
		"How do I update my credit card?", "Why was I charged twice?", "What plans and prices do you offer?",
		"How do I turn on two-factor authentication?", "My device does not connect to Wi-Fi, what can I do?",
		"how do I change my email address", "when do I get my refund for the return",
	},
	"greeting": {"hi there", "Hello!", "good morning", "Bonjour à tous", "¡Buenos días!", "hey", "こんにちは"},
	"intent": {
		"where is my invoice", "my package did not arrive", "the app keeps crashing", "I cannot log in",
		"someone logged into my account", "how much is the pro plan", "I want to send it back",
	},
	"unknown": {
		"Do you sell gift cards for pets?", "What is the meaning of life?", "Can I pay with seashells?",
		"Tell me about your office in Lisbon", "Is the moon made of cheese?",
	},
}

// chatMix weights the message kinds (per 100 chats).
var chatMix = []struct {
	kind   string
	weight int
}{{"kb", 50}, {"greeting", 15}, {"intent", 20}, {"unknown", 15}}

// continueShare is the share (per 100) of chats continuing the user's
// previous conversation instead of starting one.
const continueShare = 30

// writeKnowledge writes the bench CATs' knowledge base: the demo
// knowledge file when the harness runs from the repository, else a small
// one on the same topics, so the legacy pipeline has real work to do.
func writeKnowledge(configDir string) (string, error) {
	const rel = "knowledge/bench.yaml"
	path := filepath.Join(configDir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return "", err
	}
	kb, err := os.ReadFile(filepath.Join("configs", "knowledge", "demo.yaml"))
	if err != nil {
		kb = []byte(fallbackKnowledge)
	}
	return rel, os.WriteFile(path, kb, 0o600) //nolint:gosec // the operator's working directory
}

const fallbackKnowledge = `entries:
  - id: reset-password
    question: "How do I reset my password?"
    answer: "Use the Forgot password link on the sign-in page."
  - id: track-order
    question: "Where can I track my order?"
    answer: "The tracking number is on the order page."
  - id: return-item
    question: "How do I return an item?"
    answer: "Start from My orders, then Return or exchange."
  - id: refund-time
    question: "When will I get my refund?"
    answer: "Refunds take 5-10 business days."
  - id: charged-twice
    question: "Why was I charged twice?"
    answer: "A second charge is usually a pending authorization."
intents:
  - name: billing
    keywords: [invoice, refund, charged, payment]
    examples: ["where is my invoice"]
  - name: shipping
    keywords: [delivery, shipping, tracking, package]
    examples: ["my package did not arrive"]
`

// userTokens issues one user-role token per simulated user.
func userTokens(ctx context.Context, cfg config, ds dataset, n int) ([]string, error) {
	tokens := make([]string, n)
	for i := range tokens {
		t, err := issueToken(ctx, cfg, ds, fmt.Sprintf("catbench-user-%02d", i), "user")
		if err != nil {
			return nil, err
		}
		tokens[i] = t
	}
	return tokens, nil
}

// chatReply is the part of a chat response the harness reads.
type chatReply struct {
	Message        string `json:"message"`
	ConversationID string `json:"conversation_id"`
	Model          string `json:"model"`
}

// chatUser is one simulated user: its own token and its last
// conversation, which some of its chats continue.
type chatUser struct {
	token        string
	conversation string
	rng          *rand.Rand
	on           *client // the instance it talks to
}

// newUserRand returns the user's reproducible message source.
func newUserRand(user uint64) *rand.Rand {
	return rand.New(rand.NewPCG(benchSeed, user)) //nolint:gosec // a reproducible message mix, not a secret
}

// nextMessage draws the next message from the mix and the conversation it
// continues ("" for a new one).
func (u *chatUser) nextMessage() (message, conversation string) {
	k := u.rng.IntN(100)
	kind := chatMix[len(chatMix)-1].kind
	for _, m := range chatMix {
		if k < m.weight {
			kind = m.kind
			break
		}
		k -= m.weight
	}
	msgs := chatMessages[kind]
	message = msgs[u.rng.IntN(len(msgs))]
	if u.conversation != "" && u.rng.IntN(100) < continueShare {
		conversation = u.conversation
	}
	return message, conversation
}

// chat sends one chat and returns the reply and its latency up to the last
// byte read.
func (c *client) chat(ctx context.Context, token, message, conversation string) (chatReply, time.Duration, error) {
	var reply chatReply
	b, d, err := c.postChat(ctx, token, benchCats[0], message, conversation)
	if err != nil {
		return reply, 0, err
	}
	if err := json.Unmarshal(b, &reply); err != nil {
		return reply, 0, fmt.Errorf("chat reply: %w", err)
	}
	if reply.ConversationID == "" || reply.Message == "" {
		return reply, 0, fmt.Errorf("chat reply without message or conversation: %.300s", b)
	}
	return reply, d, nil
}

// postChat sends one message to CAT cat's chat route as the user of token,
// in conversation (empty: a new one), and returns the 200 answer's body and
// the latency up to its last byte; any other status is an error.
func (c *client) postChat(ctx context.Context, token, cat, message, conversation string) ([]byte, time.Duration, error) {
	body, err := json.Marshal(struct {
		Message        string `json:"message"`
		ConversationID string `json:"conversation_id,omitempty"`
	}{message, conversation})
	if err != nil {
		return nil, 0, err
	}
	u := c.base + "/api/v1/cat/chat?" + url.Values{"catname": {cat}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body)) //nolint:gosec // the local server under test
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := c.http.Do(req) //nolint:gosec // the local server under test
	if err != nil {
		return nil, 0, err
	}
	b, err := io.ReadAll(resp.Body)
	d := time.Since(start)
	_ = resp.Body.Close()
	if err != nil {
		return nil, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("chat: %s: %.300s", resp.Status, b)
	}
	return b, d, nil
}

// storedChecks and storedPause bound how long driveChat waits for the
// index to count the last chats: past the index's one-second poll.
const (
	storedChecks = 15
	storedPause  = 200 * time.Millisecond
)

// totalInteractions asks the server how many interactions the bench CAT has.
func (c *client) totalInteractions(ctx context.Context) (int64, error) {
	var out struct {
		Total int64 `json:"total_interactions"`
	}
	err := c.getJSON(ctx, "/metrics/total_interactions", url.Values{"catname": {benchCats[0]}}, &out)
	return out.Total, err
}

// driveChat runs n chats (fewer if the budget runs out first) from one
// goroutine per user over keep-alive connections (one per user in
// flight), user k on instance k mod len(instances), and checks that
// /metrics/total_interactions of the first instance grew by exactly the
// number of chats (the instances share one database).
func driveChat(ctx context.Context, instances []*client, tokens []string, n int, budget time.Duration) (chatStats, error) {
	c := instances[0]
	st := chatStats{users: len(tokens), instances: len(instances), byModel: map[string]int{}}
	before, err := c.totalInteractions(ctx)
	if err != nil {
		return st, fmt.Errorf("total before: %w", err)
	}
	users := make([]*chatUser, len(tokens))
	// Warm-up: every user opens its connection and first conversation,
	// all at once as in the timed part, so that the servers' database
	// pools hold as many connections as the timed part uses.
	warm := make(chan error, len(tokens))
	for i, t := range tokens {
		u := &chatUser{token: t, rng: newUserRand(uint64(i)), on: instances[i%len(instances)]}
		users[i] = u
		msg, _ := u.nextMessage()
		go func() {
			reply, _, err := u.on.chat(ctx, t, msg, "")
			if err == nil {
				u.conversation = reply.ConversationID
			}
			warm <- err
		}()
	}
	for range tokens {
		if err := <-warm; err != nil {
			return st, fmt.Errorf("warm-up: %w", err)
		}
		st.warmUps++
	}
	var (
		mu        sync.Mutex
		latencies []time.Duration
		firstErr  error
		next      atomic.Int64
	)
	start := time.Now()
	deadline := start.Add(budget)
	var wg sync.WaitGroup
	for _, u := range users {
		wg.Go(func() {
			for {
				if k := next.Add(1); k > int64(n) || time.Now().After(deadline) {
					return
				}
				msg, conv := u.nextMessage()
				reply, d, err := u.on.chat(ctx, u.token, msg, conv)
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				latencies = append(latencies, d)
				st.byModel[reply.Model]++
				if conv != "" {
					st.continued++
				}
				mu.Unlock()
				u.conversation = reply.ConversationID
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return st, firstErr
	}
	if len(latencies) == 0 {
		return st, errors.New("no chat answered")
	}
	slices.Sort(latencies)
	st.chats = len(latencies)
	st.cutShort = st.chats < n
	st.p50, st.p99 = percentile(latencies, 50), percentile(latencies, 99)
	st.perSec = float64(st.chats) / elapsed.Seconds()
	// On PostgreSQL the column index counts a chat once every chat that
	// began before it has committed (the feed's horizon), at the latest
	// at its next poll: ask again for a few seconds before calling a
	// chat lost.
	want := int64(st.chats + st.warmUps)
	for tries := 0; ; tries++ {
		after, err := c.totalInteractions(ctx)
		if err != nil {
			return st, fmt.Errorf("total after: %w", err)
		}
		st.stored = after - before
		st.storedOK = st.stored == want
		if st.storedOK || st.stored > want || tries == storedChecks {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(storedPause):
		}
	}
}
