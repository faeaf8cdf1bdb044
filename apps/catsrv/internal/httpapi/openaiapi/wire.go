package openaiapi

import (
	"encoding/json"
	"strings"

	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

// CompletionRequest is the body of POST /v1/chat/completions: the fields
// of OpenAI's request that a CAT reads; others are accepted and ignored.
type CompletionRequest struct {
	Model         string           `json:"model" doc:"The CAT's name (GET /v1/models lists them)."`
	Messages      []RequestMessage `json:"messages" nullable:"false" doc:"The conversation: the last user message is the turn's message, earlier ones the history an agent-mode CAT's model sees."`
	Stream        bool             `json:"stream,omitempty" doc:"Answer as chat.completion.chunk Server-Sent Events ending with data: [DONE]."`
	StreamOptions *StreamOptions   `json:"stream_options,omitempty"`
}

// StreamOptions are a stream's options.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage,omitempty" doc:"Send a last chunk with usage and no choices."`
}

// RequestMessage is one message of a request: its content a string or a list of
// parts, of which the text parts are read.
type RequestMessage struct {
	Role    string          `json:"role" doc:"system, developer, user, assistant or tool."`
	Content json.RawMessage `json:"content,omitempty" doc:"A string, or a list of parts whose text parts are read."`
}

// part is one entry of a list content.
type part struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// text is a message content as text: a string, or the text parts joined.
func text(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []part
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errs.New(errs.KindInvalid, "content: must be a string or a list of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// turn splits a request's messages into the turn's message (the last user
// message) and the history before it.
func turn(msgs []RequestMessage) (string, []chat.Message, error) {
	last := -1
	for i, m := range msgs {
		if m.Role == chat.RoleUser {
			last = i
		}
	}
	if last < 0 {
		return "", nil, errs.New(errs.KindInvalid, "messages: no user message")
	}
	message, err := text(msgs[last].Content)
	if err != nil {
		return "", nil, err
	}
	var history []chat.Message
	for _, m := range msgs[:last] {
		t, err := text(m.Content)
		if err != nil {
			return "", nil, err
		}
		switch m.Role {
		case chat.RoleSystem, "developer":
			history = append(history, chat.Message{Role: chat.RoleSystem, Content: t})
		case chat.RoleUser, chat.RoleAssistant:
			if t != "" {
				history = append(history, chat.Message{Role: m.Role, Content: t})
			}
		}
		// Tool messages answer calls the CAT did not make: left out.
	}
	return message, history, nil
}

// Completion is the answer of a request without stream: one
// chat.completion, with the CAT's sources.
type Completion struct {
	ID              string             `json:"id" doc:"The completion's id."`
	Object          string             `json:"object" enum:"chat.completion" doc:"Always chat.completion."`
	Created         int64              `json:"created" doc:"Unix time of the answer."`
	Model           string             `json:"model" doc:"The CAT's name."`
	Choices         []CompletionChoice `json:"choices" nullable:"false" doc:"One choice."`
	CompletionUsage CompletionUsage    `json:"usage"`
	Sources         []CompletionSource `json:"sources" nullable:"false" doc:"What the CAT's answer drew on (catsrv's extension)."`
}

// CompletionChoice is the one choice of a completion.
type CompletionChoice struct {
	Index        int           `json:"index" doc:"Always 0."`
	Message      ChoiceMessage `json:"message"`
	FinishReason string        `json:"finish_reason" doc:"Always stop."`
}

// ChoiceMessage is the answer of a choice.
type ChoiceMessage struct {
	Role    string `json:"role" doc:"Always assistant."`
	Content string `json:"content" doc:"The answer."`
}

// CompletionUsage is a turn's tokens. catsrv knows the total the model reported;
// prompt and completion tokens are 0 when it does not tell them apart.
type CompletionUsage struct {
	PromptTokens     int `json:"prompt_tokens" doc:"Tokens of the prompt, 0 when unknown."`
	CompletionTokens int `json:"completion_tokens" doc:"Tokens of the answer, 0 when unknown."`
	TotalTokens      int `json:"total_tokens" doc:"Tokens of the turn (0 for an answer no model gave)."`
}

// Chunk is one Server-Sent Event of a stream (chat.completion.chunk).
type Chunk struct {
	ID              string             `json:"id"`
	Object          string             `json:"object"`
	Created         int64              `json:"created"`
	Model           string             `json:"model"`
	Choices         []ChunkChoice      `json:"choices"`
	CompletionUsage *CompletionUsage   `json:"usage,omitempty"`
	Sources         []CompletionSource `json:"sources,omitempty"`
}

// ChunkChoice is the one choice of a chunk.
type ChunkChoice struct {
	Index        int        `json:"index"`
	Delta        ChunkDelta `json:"delta"`
	FinishReason *string    `json:"finish_reason"`
}

// ChunkDelta is the text a chunk adds.
type ChunkDelta struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content,omitempty"`
}

// CompletionSource is what an answer drew on, as /api/v1/cat/chat gives it.
type CompletionSource struct {
	Type     string  `json:"type" doc:"kb or document."`
	ID       string  `json:"id,omitempty" doc:"The knowledge-base entry or document."`
	Question string  `json:"question,omitempty" doc:"The entry's question."`
	Title    string  `json:"title,omitempty" doc:"The document's title."`
	ChunkID  string  `json:"chunk_id,omitempty" doc:"The document chunk."`
	Snippet  string  `json:"snippet,omitempty" doc:"The text drawn on."`
	Score    float64 `json:"score,omitempty" doc:"How well it matched."`
	URL      string  `json:"url,omitempty" doc:"Where to read it."`
}

func sources(in []chat.Source) []CompletionSource {
	out := make([]CompletionSource, 0, len(in))
	for _, s := range in {
		out = append(out, CompletionSource{Type: s.Kind, ID: s.ID, Question: s.Question, Title: s.Title, ChunkID: s.ChunkID, Snippet: s.Snippet, Score: s.Score, URL: s.URL})
	}
	return out
}

func usage(tokens *int) CompletionUsage {
	if tokens == nil {
		return CompletionUsage{}
	}
	return CompletionUsage{TotalTokens: *tokens}
}

// ModelList is the answer of GET /v1/models.
type ModelList struct {
	Object string       `json:"object" enum:"list" doc:"Always list."`
	Data   []ModelEntry `json:"data" nullable:"false" doc:"The CATs, by name."`
}

// ModelEntry is a CAT as an OpenAI model.
type ModelEntry struct {
	ID      string `json:"id" doc:"The CAT's name: the model of a chat completion."`
	Object  string `json:"object" enum:"model" doc:"Always model."`
	Created int64  `json:"created" doc:"Unix time the server started."`
	OwnedBy string `json:"owned_by" doc:"Always catsrv."`
}

// ErrorResponse is an error in OpenAI's shape.
type ErrorResponse struct {
	Error OpenAIErrorDetail `json:"error"`
}

// OpenAIErrorDetail is the error of an ErrorResponse.
type OpenAIErrorDetail struct {
	Message string  `json:"message" doc:"What went wrong, safe to show."`
	Type    string  `json:"type" doc:"invalid_request_error, authentication_error, permission_error, not_found_error, rate_limit_error or server_error."`
	Param   *string `json:"param" doc:"The request field at fault, if any."`
	Code    *string `json:"code" doc:"A code, e.g. model_not_found, if any."`
}
