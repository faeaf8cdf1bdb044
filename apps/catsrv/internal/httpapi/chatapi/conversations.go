package chatapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/chat"
)

// registerConversations adds the conversation routes.
func registerConversations(api huma.API, c *chatAPI) {
	op := func(id, method, path, summary, desc string, statuses ...int) huma.Operation {
		return huma.Operation{
			OperationID: id, Method: method, Path: path,
			Summary: summary, Description: desc + " Only the caller's conversations with the CAT are visible: any other id is 404.",
			Tags: []string{tagConversations}, Security: security,
			Responses: errorResponses(api, append([]int{http.StatusUnauthorized, http.StatusUnprocessableEntity, http.StatusInternalServerError, http.StatusServiceUnavailable}, statuses...)...),
		}
	}
	huma.Register(api, op("listConversations", http.MethodGet, "", "List conversations",
		"The caller's conversations, newest activity first, a page at a time."), c.list)
	huma.Register(api, op("searchConversations", http.MethodGet, "/search", "Search conversations",
		"Full-text search over names and messages: every word must appear; ranked, with a snippet."), c.search)
	huma.Register(api, op("getConversation", http.MethodGet, "/{id}", "Get a conversation",
		"The conversation with its messages in order.", http.StatusNotFound), c.get)
	del := op("deleteConversation", http.MethodDelete, "/{id}", "Delete a conversation",
		"Removes the conversation and its messages.", http.StatusForbidden, http.StatusNotFound)
	del.DefaultStatus = http.StatusNoContent
	huma.Register(api, del, c.delete)
	huma.Register(api, op("renameConversation", http.MethodPut, "/{id}/rename", "Rename a conversation",
		"Sets the name; searches see it at once.", http.StatusForbidden, http.StatusNotFound), c.rename)
	huma.Register(api, noContent(op("putFeedback", http.MethodPut, "/{id}/messages/{message_id}/feedback", "Rate an answer", feedbackDoc+" Given again, it replaces the feedback.", http.StatusForbidden, http.StatusNotFound)), c.putFeedback)
	huma.Register(api, noContent(op("deleteFeedback", http.MethodDelete, "/{id}/messages/{message_id}/feedback", "Remove an answer's rating", feedbackDoc+" Removing none is no error.", http.StatusForbidden, http.StatusNotFound)), c.deleteFeedback)
}

// feedbackDoc describes the feedback routes.
const feedbackDoc = "The caller's rating of an assistant's answer in their conversation (message_id: the message's id), " +
	"counted by /api/v1/analytics/feedback at once. A user's or tool's message, or an agent's tool-calling step, is 422; " +
	"another's conversation, an unknown message, or an answer without an interaction (stored before messages had ids, or erased) is 404."

// noContent makes an operation answer 204.
func noContent(op huma.Operation) huma.Operation {
	op.DefaultStatus = http.StatusNoContent
	return op
}

func (c *chatAPI) putFeedback(ctx context.Context, in *feedbackInput) (*struct{}, error) {
	who, err := c.authenticate(ctx, in.Cat)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	f := analytics.Feedback{Rating: in.Body.Rating, Reason: deref(in.Body.Reason), Comment: deref(in.Body.Comment)}
	if err := c.d.Service.SetFeedback(ctx, who.owner, in.ID, in.MessageID, f); err != nil {
		return nil, c.fail(ctx, err)
	}
	return &struct{}{}, nil
}

func (c *chatAPI) deleteFeedback(ctx context.Context, in *feedbackDeleteInput) (*struct{}, error) {
	who, err := c.authenticate(ctx, in.Cat)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	if err := c.d.Service.SetFeedback(ctx, who.owner, in.ID, in.MessageID, analytics.Feedback{}); err != nil {
		return nil, c.fail(ctx, err)
	}
	return &struct{}{}, nil
}

func (c *chatAPI) list(ctx context.Context, in *conversationListInput) (*base.Body[ConversationList], error) {
	who, err := c.authenticate(ctx, in.Cat)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	page, err := c.d.Service.Conversations(ctx, who.owner, chat.Page{After: in.Cursor, Limit: in.Limit})
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	out := ConversationList{Conversations: make([]ConversationSummary, 0, len(page.Conversations))}
	for _, conv := range page.Conversations {
		out.Conversations = append(out.Conversations, summary(conv))
	}
	if page.Next != "" {
		out.NextCursor = &page.Next
	}
	return &base.Body[ConversationList]{Body: out}, nil
}

func (c *chatAPI) search(ctx context.Context, in *conversationSearchInput) (*base.Body[SearchResults], error) {
	who, err := c.authenticate(ctx, in.Cat)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	limit, err := chat.Limited(in.Limit)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	hits, err := c.d.Service.Search(ctx, who.owner, in.Q, limit)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	out := SearchResults{Results: make([]SearchHitBody, 0, len(hits))}
	for _, h := range hits {
		out.Results = append(out.Results, SearchHitBody{ConversationSummary: summary(h.Conversation), Snippet: h.Snippet, Score: h.Score})
	}
	return &base.Body[SearchResults]{Body: out}, nil
}

func (c *chatAPI) get(ctx context.Context, in *conversationIDInput) (*base.Body[ConversationDetail], error) {
	who, err := c.authenticate(ctx, in.Cat)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	conv, messages, err := c.d.Service.Conversation(ctx, who.owner, in.ID)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	out := ConversationDetail{ConversationSummary: summary(conv), Messages: make([]MessageBody, 0, len(messages))}
	for _, m := range messages {
		out.Messages = append(out.Messages, messageBody(m))
	}
	return &base.Body[ConversationDetail]{Body: out}, nil
}

func (c *chatAPI) delete(ctx context.Context, in *conversationIDInput) (*struct{}, error) {
	who, err := c.authenticate(ctx, in.Cat)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	if err := c.d.Service.Delete(ctx, who.owner, in.ID); err != nil {
		return nil, c.fail(ctx, err)
	}
	return &struct{}{}, nil
}

func (c *chatAPI) rename(ctx context.Context, in *renameInput) (*base.Body[ConversationSummary], error) {
	who, err := c.authenticate(ctx, in.Cat)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	conv, err := c.d.Service.Rename(ctx, who.owner, in.ID, in.Body.Name)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	return &base.Body[ConversationSummary]{Body: summary(conv)}, nil
}
