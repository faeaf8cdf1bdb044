package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/catsrv/catsrv/adapters/openai/openaitest"
)

// openAIFixture is a running `catsrv serve` with a legacy CAT (shop, whose
// knowledge base answers the password question) and an agent CAT (bot,
// answered by a scripted model), for the OpenAI-compatible routes.
type openAIFixture struct {
	*served
	token string
	model *openaitest.Server
}

// The scripted model's answer and usage, and the legacy CAT's answer.
const (
	agentReply    = "Hello from the agent."
	agentUsage    = 7
	legacyAnswer  = "Use the forgot password link on the sign-in page."
	passwordQuery = "How do I reset my password?"
)

func startOpenAIFixture(t *testing.T) openAIFixture {
	t.Helper()
	model := openaitest.New(openaitest.Steps(openaitest.Reply{Text: agentReply, Usage: agentUsage}))
	t.Cleanup(model.Close)
	cfg := t.TempDir()
	for name, body := range map[string]string{
		"shop.yaml":    "cat:\n  chat_mode: legacy\n  legacy:\n    knowledge_base: kb/shop.yaml\n",
		"bot.yaml":     "cat:\n  chat_mode: agent\n  agent:\n    base_url: " + model.BaseURL() + "\n    model: m-1\n    instructions: Be brief.\n",
		"kb/shop.yaml": "entries:\n  - id: reset-password\n    question: " + passwordQuery + "\n    answer: " + legacyAnswer + "\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(cfg, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cfg, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv := startServe(t, cfg, "sqlite:"+filepath.Join(t.TempDir(), "catsrv.db"))
	return openAIFixture{served: srv, token: issueToken(t, cfg, "oai-user", "user"), model: model}
}

// TestOpenAIGoClient talks to a running `catsrv serve` through the
// official Go SDK (openai-go): the model list, a legacy and an agent CAT,
// plain and streamed, a conversation continued by its header, the CAT's
// sources, and an unknown model's error.
func TestOpenAIGoClient(t *testing.T) {
	t.Parallel()
	f := startOpenAIFixture(t)
	ctx := t.Context()
	c := openai.NewClient(option.WithBaseURL(f.base+"/v1/"), option.WithAPIKey(f.token), option.WithMaxRetries(0))

	page, err := c.Models.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, []string{"bot", "shop"}) || page.Data[0].OwnedBy != "catsrv" {
		t.Fatalf("models: %v", page.Data)
	}

	var raw *http.Response
	params := openai.ChatCompletionNewParams{Model: "shop", Messages: []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage("Be brief."), openai.UserMessage(passwordQuery)}}
	resp, err := c.Chat.Completions.New(ctx, params, option.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	conv := raw.Header.Get("X-Conversation-Id")
	if resp.Choices[0].Message.Content != legacyAnswer || conv == "" || !strings.Contains(resp.JSON.ExtraFields["sources"].Raw(), `"reset-password"`) {
		t.Fatalf("legacy: %s %v", resp.RawJSON(), raw.Header)
	}

	// Streamed, continuing the conversation: the accumulated chunks are the answer.
	stream := c.Chat.Completions.NewStreaming(ctx, params, option.WithHeader("X-Conversation-Id", conv), option.WithResponseInto(&raw))
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil || len(acc.Choices) != 1 || acc.Choices[0].Message.Content != legacyAnswer || raw.Header.Get("X-Conversation-Id") != conv {
		t.Fatalf("legacy stream: %v %+v %v", err, acc.Choices, raw.Header)
	}

	// The agent's model sees the client's history and reports its tokens.
	agent := openai.ChatCompletionNewParams{Model: "bot", Messages: []openai.ChatCompletionMessageParamUnion{
		openai.UserMessage("first"), openai.AssistantMessage("premier"), openai.UserMessage("second")}}
	resp, err = c.Chat.Completions.New(ctx, agent)
	if err != nil || resp.Choices[0].Message.Content != agentReply || resp.Usage.TotalTokens != agentUsage {
		t.Fatalf("agent: %v %s", err, resp.RawJSON())
	}
	reqs := f.model.Requests()
	var seen []string
	for _, m := range reqs[len(reqs)-1].Messages() {
		seen = append(seen, m["role"].(string)+":"+m["content"].(string))
	}
	if want := []string{"system:Be brief.", "user:first", "assistant:premier", "user:second"}; !slices.Equal(seen, want) {
		t.Fatalf("the model saw %q, want %q", seen, want)
	}
	agent.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream = c.Chat.Completions.NewStreaming(ctx, agent)
	acc = openai.ChatCompletionAccumulator{}
	var usage int64
	for stream.Next() {
		chunk := stream.Current()
		acc.AddChunk(chunk)
		if len(chunk.Choices) == 0 {
			usage = chunk.Usage.TotalTokens
		}
	}
	if err := stream.Err(); err != nil || acc.Choices[0].Message.Content != agentReply || usage != agentUsage {
		t.Fatalf("agent stream: %v %+v usage %d", err, acc.Choices, usage)
	}

	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "nosuchcat", Messages: params.Messages})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound || apiErr.Type != "not_found_error" || apiErr.Message == "" {
		t.Fatalf("unknown model: %v", err)
	}
	bad := openai.NewClient(option.WithBaseURL(f.base+"/v1/"), option.WithAPIKey("not-a-token"), option.WithMaxRetries(0))
	if _, err := bad.Models.List(ctx); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized {
		t.Fatalf("bad token: %v", err)
	}
}

// openAIJSDir is the program of the official openai npm package
// (tools/openai-js), relative to this package.
const openAIJSDir = "../../tools/openai-js"

// jsTurn is one chat of tools/openai-js/src/main.mjs.
type jsTurn struct {
	Object       string   `json:"object"`
	Content      string   `json:"content"`
	FinishReason string   `json:"finish_reason"`
	TotalTokens  *int     `json:"total_tokens"`
	Sources      []string `json:"sources"`
	Conversation string   `json:"conversation"`
	Chunks       int      `json:"chunks"`
}

// jsFailure is an error the openai package threw.
type jsFailure struct {
	Status  int    `json:"status"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// TestOpenAIJSClient runs the official openai npm package (pinned by
// tools/openai-js/package-lock.json) against a running `catsrv serve`:
// the model list, a legacy and an agent CAT, plain and streamed, and the
// errors of an unknown model and a bad token. Needs Node.js and npm.
func TestOpenAIJSClient(t *testing.T) {
	t.Parallel()
	node, npm := nodeTools(t)
	dir, err := filepath.Abs(openAIJSDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	inDir(ctx, t, dir, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	f := startOpenAIFixture(t)
	out := inDir(ctx, t, dir, node, "src/main.mjs", f.base, f.token, "shop", "bot")
	var got struct {
		Models []struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			OwnedBy string `json:"owned_by"`
		} `json:"models"`
		LegacyPlain, LegacyStream, AgentPlain, AgentStream jsTurn
		Unknown, Anonymous                                 jsFailure
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("main.mjs printed no result: %v\n%s", err, out)
	}
	if len(got.Models) != 2 || got.Models[0].ID != "bot" || got.Models[1].ID != "shop" || got.Models[0].Object != "model" || got.Models[0].OwnedBy != "catsrv" {
		t.Errorf("models: %+v", got.Models)
	}
	lp, ls := got.LegacyPlain, got.LegacyStream
	if lp.Object != "chat.completion" || lp.Content != legacyAnswer || lp.FinishReason != "stop" || !slices.Equal(lp.Sources, []string{"reset-password"}) || lp.Conversation == "" {
		t.Errorf("legacy: %+v", lp)
	}
	if ls.Content != legacyAnswer || ls.FinishReason != "stop" || ls.Conversation != lp.Conversation || ls.TotalTokens == nil || ls.Chunks < 3 {
		t.Errorf("legacy stream (continuing %s): %+v", lp.Conversation, ls)
	}
	ap, as := got.AgentPlain, got.AgentStream
	if ap.Content != agentReply || ap.TotalTokens == nil || *ap.TotalTokens != agentUsage || ap.Conversation == "" || ap.Conversation == lp.Conversation {
		t.Errorf("agent: %+v", ap)
	}
	if as.Content != agentReply || as.TotalTokens == nil || *as.TotalTokens != agentUsage || as.Conversation == "" || as.Conversation == ap.Conversation {
		t.Errorf("agent stream: %+v", as)
	}
	for _, r := range f.model.Requests() {
		var seen []string
		for _, m := range r.Messages() {
			seen = append(seen, m["role"].(string)+":"+m["content"].(string))
		}
		if want := []string{"system:Be brief.", "user:first", "assistant:premier", "user:second"}; !slices.Equal(seen, want) {
			t.Errorf("the model saw %q, want %q", seen, want)
		}
	}
	if got.Unknown.Status != http.StatusNotFound || got.Unknown.Type != "not_found_error" || got.Unknown.Message == "" {
		t.Errorf("unknown model: %+v", got.Unknown)
	}
	if got.Anonymous.Status != http.StatusUnauthorized || got.Anonymous.Type != "authentication_error" {
		t.Errorf("bad token: %+v", got.Anonymous)
	}
}
