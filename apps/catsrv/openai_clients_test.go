package main

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
