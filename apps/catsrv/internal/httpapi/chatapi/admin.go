package chatapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/privacy"
	"github.com/catsrv/catsrv/core/chat"
)

// adminConversationInput names a conversation of any user.
type adminConversationInput struct {
	CatParam
	User string `path:"user" minLength:"1" maxLength:"512" doc:"The user id the conversation belongs to (user_id of the chat log)."`
	ID   string `path:"id" maxLength:"200" doc:"Conversation id (conversation_id of the chat log)."`
}

// registerAdmin adds the admin's conversation route: deleting any
// user's conversation, as the dashboard's chat-log view does.
func registerAdmin(api huma.API, c *chatAPI) {
	del := huma.Operation{
		OperationID: "adminDeleteConversation", Method: http.MethodDelete, Path: "/users/{user}/conversations/{id}",
		Summary: "Delete a user's conversation (admin)",
		Description: "Removes the conversation and its messages, whoever owns it. Admin token required. " +
			"Its interactions stay in the analytics; erasing the user (DELETE /api/v1/auth/users/{user}) removes them too. " +
			"A conversation already deleted is 404.",
		Tags: []string{tagConversations}, Security: security,
		Responses: errorResponses(api, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
			http.StatusUnprocessableEntity, http.StatusInternalServerError, http.StatusServiceUnavailable),
		DefaultStatus: http.StatusNoContent,
	}
	huma.Register(api, del, c.adminDelete)
}

func (c *chatAPI) adminDelete(ctx context.Context, in *adminConversationInput) (*struct{}, error) {
	who, err := c.authenticate(ctx, in.Cat)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	if err := auth.RequireAdmin(who.claims); err != nil {
		return nil, c.fail(ctx, err)
	}
	if err := privacy.CheckUser(in.User); err != nil {
		return nil, c.fail(ctx, err)
	}
	if err := c.d.Service.Delete(ctx, chat.Owner{Cat: who.owner.Cat, UserID: in.User}, in.ID); err != nil {
		return nil, c.fail(ctx, err)
	}
	return &struct{}{}, nil
}
