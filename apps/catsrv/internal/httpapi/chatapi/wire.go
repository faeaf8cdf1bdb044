package chatapi

import (
	"time"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/catconfig/overlay"
	"github.com/catsrv/catsrv/core/chat"
)

// This file holds the wire shapes of the /api/v1/cat routes: their
// parameters and bodies with the spec's JSON names (§2.2, §2.3), and their
// conversions from the core's types, which carry no JSON tags.

// ChatRequest is the body of /chat, /legacy_chat and /agent_chat (spec
// §2.2).
type ChatRequest struct {
	Message        string         `json:"message" doc:"The user message: not blank, at most cat.max_message_bytes (default 32 KiB)."`
	ConversationID *string        `json:"conversation_id,omitempty" nullable:"true" maxLength:"200" doc:"A conversation of the caller to continue; null starts a new one."`
	Context        map[string]any `json:"context,omitempty" doc:"Free-form context: topic and persona name the interaction's; custom routing rules may read any field."`
	Stream         bool           `json:"stream,omitempty" doc:"Reply as Server-Sent Events: delta events, then done (or error)."`
	Model          *string        `json:"model,omitempty" nullable:"true" maxLength:"256" doc:"Overrides the CAT's agent model."`
}

// ChatResponse is the reply (spec §2.3), and the data of the done event.
type ChatResponse struct {
	Message        string   `json:"message" doc:"Reply text."`
	ConversationID string   `json:"conversation_id" doc:"Conversation the reply belongs to."`
	Model          string   `json:"model" doc:"What answered: a legacy stage (greeting, intent, qa, default) or the agent's model."`
	TokensUsed     *int     `json:"tokens_used" doc:"Tokens the model reported, null when unknown."`
	Sources        []Source `json:"sources" nullable:"false" doc:"What the reply drew on: passages of the CAT's documents or knowledge-base entries; a [n] marker in the message cites the n-th."`
}

// Source is what a reply drew on: a chunk of one of the CAT's documents
// (kind document) or a knowledge-base entry (kind kb).
type Source struct {
	Kind     string  `json:"kind" enum:"document,kb" doc:"document: a chunk of an uploaded document; kb: a knowledge-base entry."`
	ID       string  `json:"id" doc:"The document's id, or the entry's."`
	Title    string  `json:"title" doc:"The document's title, or the entry's question."`
	ChunkID  string  `json:"chunk_id" doc:"The chunk's id (GET /documents/{id} lists them); the entry's id for kb."`
	Snippet  string  `json:"snippet" doc:"The extract of the passage that answers (for kb, of the answer)."`
	Score    float64 `json:"score" doc:"Relevance, 0 to 1."`
	URL      *string `json:"url,omitempty" doc:"Where the document's original is, when it was given."`
	Question *string `json:"question,omitempty" doc:"The entry's question (kb only)."`
}

// DeltaEvent is the data of a delta event: the next piece of the reply.
type DeltaEvent struct {
	Text string `json:"text" doc:"The next chunk of the reply text."`
}

type chatInput struct {
	CatParam
	Body ChatRequest
}

func chatBody(r chat.Response) ChatResponse {
	sources := make([]Source, 0, len(r.Sources))
	for _, s := range r.Sources {
		w := Source{Kind: s.Kind, ID: s.ID, Title: s.Title, ChunkID: s.ChunkID, Snippet: s.Snippet, Score: s.Score}
		if w.Kind == "" {
			w.Kind = chat.SourceKB
		}
		if s.URL != "" {
			w.URL = &s.URL
		}
		if w.Kind == chat.SourceKB {
			q := s.Question
			w.Question = &q
			if w.ChunkID == "" {
				w.ChunkID = s.ID
			}
		}
		sources = append(sources, w)
	}
	return ChatResponse{Message: r.Message, ConversationID: r.ConversationID, Model: r.Model, TokensUsed: r.TokensUsed, Sources: sources}
}

// CatParam names the CAT of a chat or conversation request.
type CatParam struct {
	Cat string `query:"catname" maxLength:"64" doc:"CAT name; the server's default CAT when omitted."`
}

// ConversationSummary is a conversation without its messages.
type ConversationSummary struct {
	ID        string    `json:"id" doc:"Conversation id."`
	Name      string    `json:"name" doc:"Name: from the first message until renamed."`
	CreatedAt time.Time `json:"created_at" doc:"When the conversation started (UTC)."`
	UpdatedAt time.Time `json:"updated_at" doc:"Time of the last message or rename (UTC); lists are ordered by it."`
}

// ConversationList is one page of the caller's conversations.
type ConversationList struct {
	Conversations []ConversationSummary `json:"conversations" nullable:"false" doc:"Newest first."`
	NextCursor    *string               `json:"next_cursor" doc:"Cursor of the next page; null on the last page."`
}

// MessageBody is one message of a conversation. The agent's tool calls
// have OpenAI's shape: an assistant message with tool_calls, then one
// tool message per call with its tool_call_id.
type MessageBody struct {
	ID         string         `json:"id" doc:"The message's id: stable, unique; an assistant message's id names its feedback (PUT /conversations/{id}/messages/{message_id}/feedback)."`
	Role       string         `json:"role" enum:"user,assistant,tool" doc:"Who wrote it: the user, the assistant, or a tool (the result of one of the assistant's tool calls)."`
	Content    string         `json:"content" doc:"The text; a tool's result (cut at 32 KiB with a marker). May be empty for an assistant message with tool_calls."`
	Model      string         `json:"model" doc:"What answered an assistant message; empty for the user's and tools'."`
	Time       time.Time      `json:"time" doc:"When it was stored (UTC)."`
	ToolCalls  []ToolCallBody `json:"tool_calls,omitempty" doc:"The tools an assistant message called."`
	ToolCallID string         `json:"tool_call_id,omitempty" doc:"A tool message: the call it answers."`
	Name       string         `json:"name,omitempty" doc:"A tool message: the tool's name."`
	Outcome    string         `json:"outcome,omitempty" doc:"A tool message: how the call ended: ok, error, timeout, denied (by the policy, a person or the approval time-out) or invalid (unknown tool, arguments not a JSON object)."`
	DurationMS *int64         `json:"duration_ms,omitempty" doc:"A tool message: how long the call took, approval included, in milliseconds."`
}

// ToolCallBody is one tool call of an assistant message, as
// chat-completions APIs write it.
type ToolCallBody struct {
	ID       string           `json:"id" doc:"The call's id, named by the tool message answering it."`
	Type     string           `json:"type" enum:"function" doc:"Always function."`
	Function ToolCallFunction `json:"function"`
}

// ToolCallFunction is the tool and arguments of a call.
type ToolCallFunction struct {
	Name      string `json:"name" doc:"The tool: <server>__<tool> for an MCP tool, or a built-in (knowledge_search)."`
	Arguments string `json:"arguments" doc:"The arguments as the model wrote them (JSON text, not always valid)."`
}

// messageBody is a stored message on the wire.
func messageBody(m chat.Message) MessageBody {
	out := MessageBody{ID: m.ID, Role: m.Role, Content: m.Content, Model: m.Model, Time: m.Time.UTC(), ToolCallID: m.ToolCallID, Name: m.ToolName, Outcome: m.Outcome}
	for _, c := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, ToolCallBody{ID: c.ID, Type: "function", Function: ToolCallFunction{Name: c.Name, Arguments: c.Arguments}})
	}
	if m.Role == chat.RoleTool {
		ms := m.Duration.Milliseconds()
		out.DurationMS = &ms
	}
	return out
}

// ToolCallEvent is the data of a tool_call event: the model called a tool.
type ToolCallEvent struct {
	ID        string `json:"id" doc:"The call's id."`
	Name      string `json:"name" doc:"The tool."`
	Arguments string `json:"arguments" doc:"The arguments as the model wrote them (JSON text)."`
}

// ToolResultEvent is the data of a tool_result event: a call ended.
type ToolResultEvent struct {
	ID      string `json:"id" doc:"The call's id."`
	Name    string `json:"name" doc:"The tool."`
	OK      bool   `json:"ok" doc:"Whether the tool ran and succeeded; false for a failure, time-out, denial or invalid call."`
	Content string `json:"content" doc:"The result the model sees, cut to 2 KiB here (stored up to 32 KiB)."`
}

// ApprovalRequiredEvent is the data of an approval_required event: an
// ask call waits for POST /api/v1/cat/approvals/{approval_id}.
type ApprovalRequiredEvent struct {
	ApprovalID string    `json:"approval_id" doc:"The id to decide on."`
	Name       string    `json:"name" doc:"The tool."`
	Arguments  string    `json:"arguments" doc:"The arguments the model wrote."`
	ExpiresAt  time.Time `json:"expires_at" doc:"When the call counts as denied without a decision (UTC)."`
}

// ApprovalDecision is the body of POST /approvals/{approval_id}.
type ApprovalDecision struct {
	Decision string `json:"decision" enum:"approve,deny" doc:"approve runs the call; deny gives the model a result saying it was refused."`
}

// PendingApproval is one ask call waiting for a decision.
type PendingApproval struct {
	ApprovalID string    `json:"approval_id" doc:"The id to decide on."`
	UserID     string    `json:"user_id" doc:"Whose turn it is."`
	Name       string    `json:"name" doc:"The tool."`
	Arguments  string    `json:"arguments" doc:"The arguments the model wrote."`
	ExpiresAt  time.Time `json:"expires_at" doc:"When the call counts as denied without a decision (UTC)."`
}

// PendingApprovals lists the ask calls waiting for a decision.
type PendingApprovals struct {
	Approvals []PendingApproval `json:"approvals" nullable:"false" doc:"Soonest to expire first."`
}

type approvalInput struct {
	CatParam
	ID   string `path:"approval_id" maxLength:"200" doc:"The approval_id of the approval_required event."`
	Body ApprovalDecision
}

type approvalsInput struct {
	CatParam
}

// ConversationDetail is a conversation with its messages in order.
type ConversationDetail struct {
	ConversationSummary
	Messages []MessageBody `json:"messages" nullable:"false" doc:"In the order written."`
}

// SearchHitBody is one conversation a search found.
type SearchHitBody struct {
	ConversationSummary
	Snippet string  `json:"snippet" doc:"About 120 characters of the text around the match."`
	Score   float64 `json:"score" doc:"Rank, higher first; only comparable within one response."`
}

// SearchResults are the hits of a search, best first.
type SearchResults struct {
	Results []SearchHitBody `json:"results" nullable:"false" doc:"Best first."`
}

// RenameRequest is the body of PUT /conversations/{id}/rename.
type RenameRequest struct {
	Name string `json:"name" maxLength:"1000" doc:"The new name: trimmed, 1 to 200 characters."`
}

type conversationListInput struct {
	CatParam
	Cursor string `query:"cursor" maxLength:"512" doc:"next_cursor of the previous page; omit for the first."`
	Limit  int    `query:"limit" doc:"Page size, 1 to 100; 20 when omitted."`
}

type conversationSearchInput struct {
	CatParam
	Q     string `query:"q" required:"true" maxLength:"1024" doc:"Words that must all appear in the name or messages."`
	Limit int    `query:"limit" doc:"At most this many hits, 1 to 100; 20 when omitted."`
}

type conversationIDInput struct {
	CatParam
	ID string `path:"id" maxLength:"200" doc:"Conversation id."`
}

// FeedbackRequest is the body of PUT
// /conversations/{id}/messages/{message_id}/feedback.
type FeedbackRequest struct {
	Rating  string  `json:"rating" enum:"up,down" doc:"up: the answer helped; down: it did not."`
	Reason  *string `json:"reason,omitempty" maxLength:"64" doc:"Why: one of the CAT's cat.feedback.reasons (none configured: leave it out)."`
	Comment *string `json:"comment,omitempty" maxLength:"2000" doc:"Free text, at most 2000 characters."`
}

type feedbackInput struct {
	CatParam
	ID        string `path:"id" maxLength:"200" doc:"Conversation id."`
	MessageID string `path:"message_id" maxLength:"256" doc:"The answer's message id (messages[].id of GET /conversations/{id})."`
	Body      FeedbackRequest
}

type feedbackDeleteInput struct {
	CatParam
	ID        string `path:"id" maxLength:"200" doc:"Conversation id."`
	MessageID string `path:"message_id" maxLength:"256" doc:"The answer's message id."`
}

type renameInput struct {
	CatParam
	ID   string `path:"id" maxLength:"200" doc:"Conversation id."`
	Body RenameRequest
}

func summary(c chat.Conversation) ConversationSummary {
	return ConversationSummary{ID: c.ID, Name: c.Name, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
}

// ConfigResponse is a CAT's effective configuration: the files with the
// runtime changes applied. Secrets live only in the environment; Secrets
// says which are set.
type ConfigResponse struct {
	Name     string             `json:"name" doc:"CAT name."`
	Cat      catconfig.Chat     `json:"cat"`
	Security catconfig.Security `json:"security"`
	Secrets  map[string]string  `json:"secrets" doc:"Each secret of the environment the CAT uses: set or unset."`
}

type configInput struct {
	CatParam
}

type syncInput struct {
	CatParam
	Body Override
}

// Override is the body of POST /config/sync: a change of the runtime keys;
// an absent key is left as it is. The JSON names are those of the cat.*
// keys.
type Override struct {
	ChatMode *string         `json:"chat_mode,omitempty" doc:"cat.chat_mode: legacy, agent or custom."`
	Agent    *AgentOverride  `json:"agent,omitempty"`
	Legacy   *LegacyOverride `json:"legacy,omitempty"`
	Custom   *CustomOverride `json:"custom,omitempty"`
}

// AgentOverride changes cat.agent.* keys.
type AgentOverride struct {
	Model                  *string   `json:"model,omitempty" doc:"cat.agent.model."`
	Instructions           *string   `json:"instructions,omitempty" doc:"cat.agent.instructions, the system message."`
	Temperature            *float64  `json:"temperature,omitempty" doc:"cat.agent.temperature, 0 to 2."`
	MaxTokens              *int      `json:"max_tokens,omitempty" doc:"cat.agent.max_tokens, 1 to 1048576."`
	TimeoutSeconds         *int      `json:"timeout_seconds,omitempty" doc:"cat.agent.timeout_seconds, 1 to 600."`
	MaxSteps               *int      `json:"max_steps,omitempty" doc:"cat.agent.max_steps: model calls in one turn, 1 to 50."`
	ToolTimeoutSeconds     *int      `json:"tool_timeout_seconds,omitempty" doc:"cat.agent.tool_timeout_seconds: one tool call's bound, at least 1."`
	ApprovalTimeoutSeconds *int      `json:"approval_timeout_seconds,omitempty" doc:"cat.agent.approval_timeout_seconds: how long an ask call waits for a decision, at least 1."`
	Tools                  *[]string `json:"tools,omitempty" maxItems:"100" doc:"cat.agent.tools: the tool policy, rules \"<server>/<tool pattern> => allow|ask|deny\", first match wins. (mcp_servers cannot change at run time.)"`
}

// LegacyOverride changes cat.legacy.* keys.
type LegacyOverride struct {
	Models   *[]string `json:"models,omitempty" doc:"cat.legacy.models: stages among greeting, intent, qa, default."`
	MinScore *float64  `json:"min_score,omitempty" doc:"cat.legacy.min_score, 0 to 1."`
}

// CustomOverride changes cat.custom.* keys.
type CustomOverride struct {
	Rules        *[]string `json:"rules,omitempty" doc:"cat.custom.rules, each '<kind> <argument> => <route>'."`
	DefaultRoute *string   `json:"default_route,omitempty" doc:"cat.custom.default_route."`
}

// override is the core's form of the body.
func (o Override) override() overlay.Override {
	out := overlay.Override{ChatMode: o.ChatMode}
	if o.Agent != nil {
		a := overlay.AgentOverride(*o.Agent)
		out.Agent = &a
	}
	if o.Legacy != nil {
		l := overlay.LegacyOverride(*o.Legacy)
		out.Legacy = &l
	}
	if o.Custom != nil {
		c := overlay.CustomOverride(*o.Custom)
		out.Custom = &c
	}
	return out
}
