package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/catsrv/catsrv/adapters/openai/openaitest"
)

// agentRoute is the pseudo route `--routes` matches to select the agent
// measurement.
const agentRoute = "/agent_chat"

// agentCat is the CAT of the agent measurement: agent mode over the
// scripted model, with the bench knowledge base behind knowledge_search.
const agentCat = "bench-agent"

// agentStats are the agent measurement: one user's turns, one after the
// other, each a step with two parallel knowledge_search calls and a step
// answering. The loop's own time per step is the turn's time less what
// the model server spent answering, over the steps.
type agentStats struct {
	turns              int
	turnP50, turnP99   time.Duration
	modelP50, modelP99 time.Duration // the model server's time per step
	loopP50, loopP99   time.Duration // catsrv's own time per step
}

func (s agentStats) short() string {
	return fmt.Sprintf("turn p50 %s p99 %s; per step: loop p50 %s p99 %s, model p50 %s p99 %s (%d turns, 2 steps, 2 tool calls)",
		ms(s.turnP50), ms(s.turnP99), ms(s.loopP50), ms(s.loopP99), ms(s.modelP50), ms(s.modelP99), s.turns)
}

// scriptedAgentModel is the model of agentCat: a step calling
// knowledge_search twice, then an answer. It adds up the time it spends
// answering.
type scriptedAgentModel struct {
	srv   *openaitest.Server
	spent atomic.Int64 // nanoseconds answering, since the last reset
	calls atomic.Int64
}

func startAgentModel() *scriptedAgentModel {
	m := &scriptedAgentModel{}
	m.srv = openaitest.New(func(_ int, req openaitest.Request) openaitest.Reply {
		msgs := req.Messages()
		if len(msgs) > 0 && msgs[len(msgs)-1]["role"] == "tool" {
			return openaitest.Reply{Text: "You can reset it with the link on the sign-in page; refunds take 5 to 7 days.", Usage: 60}
		}
		return openaitest.Reply{Usage: 40, Calls: []openaitest.Call{
			{ID: "call_1", Name: "knowledge_search", Arguments: `{"query":"reset my password"}`},
			{ID: "call_2", Name: "knowledge_search", Arguments: `{"query":"refund time"}`},
		}}
	})
	inner := m.srv.Config.Handler
	m.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		inner.ServeHTTP(w, r)
		m.spent.Add(int64(time.Since(start)))
		m.calls.Add(1)
	})
	return m
}

// writeAgentCat configures agentCat over the model.
func writeAgentCat(configDir, kb, baseURL string) error {
	yaml := "cat:\n  chat_mode: agent\n  agent:\n    base_url: " + baseURL + "\n    model: scripted\n    max_steps: 4\n" +
		"  legacy:\n    knowledge_base: " + kb + "\n"
	return os.WriteFile(filepath.Join(configDir, agentCat+".yaml"), []byte(yaml), 0o600)
}

// benchAgent runs n agent turns of one user, one after the other.
func benchAgent(ctx context.Context, base, token string, model *scriptedAgentModel, n int) (agentStats, error) {
	httpc := &http.Client{Timeout: time.Minute}
	u := base + "/api/v1/cat/chat?" + url.Values{"catname": {agentCat}}.Encode()
	var turns, models, loops []time.Duration
	for i := -10; i < n; i++ { // ten warm-up turns
		model.spent.Store(0)
		model.calls.Store(0)
		body, _ := json.Marshal(map[string]string{"message": "How do I reset my password, and when is my refund?"})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body)) //nolint:gosec // the local server under test
		if err != nil {
			return agentStats{}, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		resp, err := httpc.Do(req) //nolint:gosec // the local server under test
		if err != nil {
			return agentStats{}, err
		}
		b, err := io.ReadAll(resp.Body)
		took := time.Since(start)
		_ = resp.Body.Close()
		if err != nil {
			return agentStats{}, err
		}
		if resp.StatusCode != http.StatusOK {
			return agentStats{}, fmt.Errorf("agent turn: %s: %.300s", resp.Status, b)
		}
		if steps := model.calls.Load(); steps != 2 {
			return agentStats{}, fmt.Errorf("agent turn took %d model calls, want 2", steps)
		}
		if i < 0 {
			continue
		}
		spent := time.Duration(model.spent.Load())
		turns = append(turns, took)
		models = append(models, spent/2)
		loops = append(loops, (took-spent)/2)
	}
	st := agentStats{turns: len(turns)}
	st.turnP50, st.turnP99 = quantiles(turns)
	st.modelP50, st.modelP99 = quantiles(models)
	st.loopP50, st.loopP99 = quantiles(loops)
	return st, nil
}

func quantiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}

// agentRow is the summary row of the agent measurement.
func (r *report) agentRow() string {
	a := r.agent
	if a == nil {
		return "| agent turn, two tool calls | — | not measured in this run | |\n"
	}
	return fmt.Sprintf("| agent turn, two tool calls (scripted model, 1 user) | — | turn p50 %s, p99 %s; the loop's own time per step (the turn less the model's time, over its 2 steps: HTTP, auth and storage included) p50 %s, p99 %s, beside the model's p50 %s, p99 %s (%d turns) | |\n",
		ms(a.turnP50), ms(a.turnP99), ms(a.loopP50), ms(a.loopP99), ms(a.modelP50), ms(a.modelP99), a.turns)
}
