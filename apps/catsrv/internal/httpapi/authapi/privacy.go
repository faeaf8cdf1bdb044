package authapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/privacy"
	"github.com/catsrv/catsrv/core/errs"
)

// This file holds the routes of a person's rights over their data:
// erasing oneself (DELETE /me), an admin erasing anyone (DELETE
// /users/{user}) and exporting oneself (GET /me/export). core/auth/privacy
// does the work; docs/auth.md tells what is erased and audited.

type (
	eraseOutput struct {
		SetCookie []http.Cookie `header:"Set-Cookie" doc:"catsrv_access and catsrv_refresh, cleared."`
	}
	eraseUserInput struct {
		User string `path:"user" doc:"The person: <provider>:<subject> (provider_a, provider_b or provider_c: the account of that identity), or a user id (an account id, or the subject of a token minted by catsrv token)." minLength:"1" maxLength:"512"`
	}
	exportOutput struct {
		ContentType        string `header:"Content-Type" hidden:"true"`
		ContentDisposition string `header:"Content-Disposition" doc:"attachment; filename=\"catsrv-export.json\""`
		Body               func(huma.Context)
	}
)

// ExportDocument is the body of GET /api/v1/auth/me/export, as the
// document shows it; the handler writes it piece by piece.
type ExportDocument struct {
	UserID        string               `json:"user_id" doc:"The caller's id: the subject of their tokens. account is null for a caller known only by a token's subject."`
	ExportedAt    time.Time            `json:"exported_at"`
	Account       *ExportAccount       `json:"account"` // null for a caller known only by a token's subject
	Memory        MemoryResponse       `json:"memory"`
	Conversations []ExportConversation `json:"conversations" nullable:"false" doc:"Every conversation of the caller, in every CAT (configured now or not), CATs by name, each newest first."`
}

// ExportAccount is the account part of an export.
type ExportAccount struct {
	ID        string    `json:"id"`
	Provider  string    `json:"provider"`
	Subject   string    `json:"subject"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ExportConversation is one conversation of an export, with its messages
// in order.
type ExportConversation struct {
	ID        string          `json:"id"`
	Cat       string          `json:"catname"`
	Name      string          `json:"name"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	Messages  []ExportMessage `json:"messages" nullable:"false"`
}

// ExportMessage is one message of an exported conversation.
type ExportMessage struct {
	ID      string    `json:"id" doc:"The message's id, as GET /api/v1/cat/conversations/{id} gives it (an assistant message's id names its feedback)."`
	Role    string    `json:"role"`
	Content string    `json:"content"`
	Model   string    `json:"model,omitempty"`
	Time    time.Time `json:"time"`
}

// privacyErrors are the error responses of the erasure and export
// operations: these and the extra ones.
func privacyErrors(extra map[int]string) map[int]string {
	out := map[int]string{
		http.StatusUnauthorized:        "No valid token (bearer or session cookie), or a revoked one.",
		http.StatusServiceUnavailable:  "Authentication or erasure is not configured, or a store is unavailable for now.",
		http.StatusInternalServerError: internalFailure,
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

func eraseMeOperation(op operation) huma.Operation {
	me := op("auth-erase-me", http.MethodDelete, "/me", "Erase the caller",
		"Erases everything catsrv holds about the caller: account, memory, refresh tokens and sessions (every session's "+
			"access tokens stop working), conversations and messages, and interactions (every aggregate updated). "+
			"The audit log records that an erasure happened, not whom. Idempotent: 204 again for a bearer token minted "+
			"by catsrv token; a session's own token is revoked by the erasure, so a second call with it is 401.",
		privacyErrors(map[int]string{http.StatusForbidden: csrf}))
	me.DefaultStatus = http.StatusNoContent
	return me
}

func eraseUserOperation(op operation) huma.Operation {
	user := op("auth-erase-user", http.MethodDelete, "/users/{user}", "Erase a user (admin)",
		"Erases everything catsrv holds about a user, as DELETE /me does for the caller. Admin token required. "+
			"Idempotent: a user id answers 204 whether or not anything was left; a <provider>:<subject> whose account "+
			"does not exist (never signed in, or already erased) answers 404.",
		privacyErrors(map[int]string{
			http.StatusBadRequest: "The user is empty, not UTF-8, has a NUL byte, or names a provider without a subject.",
			http.StatusForbidden:  "The caller is not an admin, or the session cookie came from an origin not allowed (CSRF).",
			http.StatusNotFound:   "No account of that <provider>:<subject>.",
		}))
	user.DefaultStatus = http.StatusNoContent
	return user
}

func exportMeOperation(op operation) huma.Operation {
	return op("auth-export-me", http.MethodGet, "/me/export", "Export the caller's data",
		"Everything catsrv holds about the caller (account, memory, conversations with their messages) as one JSON "+
			"document, streamed conversation by conversation. A failure after the first byte ends the document early "+
			"(it is then not valid JSON).",
		privacyErrors(nil))
}

// documentPrivacy describes the registered erasure and export
// operations' answers.
func documentPrivacy(oapi *huma.OpenAPI) {
	setDescription(oapi, Prefix+"/me", http.MethodDelete, "204", "Erased; the session cookies are cleared.")
	setDescription(oapi, Prefix+"/users/{user}", http.MethodDelete, "204", "Erased (or nothing was left to erase).")
	r := operationAt(oapi, Prefix+"/me/export", http.MethodGet).Responses["200"]
	r.Description = "The caller's data."
	r.Content = map[string]*huma.MediaType{"application/json": {
		Schema: oapi.Components.Schemas.Schema(reflect.TypeFor[ExportDocument](), true, ""),
	}}
	nullableAccount(oapi)
}

// nullableAccount makes the export's account an inline, nullable object:
// huma refers to a struct's schema, and a reference cannot be nullable.
func nullableAccount(oapi *huma.OpenAPI) {
	schemas := oapi.Components.Schemas.Map()
	doc, account := schemas["ExportDocument"], schemas["ExportAccount"]
	if doc == nil || account == nil {
		panic("authapi: the export's schemas are not registered")
	}
	inline := *account
	inline.Nullable = true
	inline.Description = "The account of a login; null for a caller known only by a token's subject."
	doc.Properties["account"] = &inline
	delete(schemas, "ExportAccount")
}

// privacyReady returns the privacy service, or 503 when the server has
// none.
func (a *authAPI) privacyReady() (*privacy.Service, error) {
	if a.d.Privacy == nil {
		return nil, errs.New(errs.KindUnavailable, "erasure and export are not configured on this server")
	}
	return a.d.Privacy, nil
}

// eraseMe erases the caller and clears the session cookies.
func (a *authAPI) eraseMe(ctx context.Context, _ *struct{}) (*eraseOutput, error) {
	c, err := base.CallerOf(ctx)
	if err != nil {
		return nil, a.authError(ctx, err)
	}
	p, err := a.privacyReady()
	if err != nil {
		return nil, a.authError(ctx, err)
	}
	if _, err := p.Erase(ctx, c.Subject, privacy.Actor{By: privacy.BySelf}); err != nil {
		return nil, a.authError(ctx, err)
	}
	return &eraseOutput{SetCookie: a.d.Cookies.clearedSession()}, nil
}

// eraseUser erases the user the path names; admins only.
func (a *authAPI) eraseUser(ctx context.Context, in *eraseUserInput) (*struct{}, error) {
	c, err := base.CallerOf(ctx)
	if err != nil {
		return nil, a.authError(ctx, err)
	}
	if err := auth.RequireAdmin(c); err != nil {
		return nil, a.authError(ctx, err)
	}
	p, err := a.privacyReady()
	if err != nil {
		return nil, a.authError(ctx, err)
	}
	id, err := p.Resolve(ctx, in.User)
	if err != nil {
		return nil, a.authError(ctx, err)
	}
	r, err := base.RequestOf(ctx)
	if err != nil {
		return nil, a.authError(ctx, err)
	}
	if _, err := p.Erase(ctx, id, privacy.Actor{By: privacy.ByAdmin, UserID: c.Subject, Meta: meta(r)}); err != nil {
		return nil, a.authError(ctx, err)
	}
	return nil, nil
}

// exportMe streams the caller's export. The profile is read before the
// status is sent, so that a store failing at once is an error answer;
// then the conversations are written one by one.
func (a *authAPI) exportMe(ctx context.Context, _ *struct{}) (*exportOutput, error) {
	c, err := base.CallerOf(ctx)
	if err != nil {
		return nil, a.authError(ctx, err)
	}
	p, err := a.privacyReady()
	if err != nil {
		return nil, a.authError(ctx, err)
	}
	prof, err := p.Profile(ctx, c.Subject)
	if err != nil {
		return nil, a.authError(ctx, err)
	}
	head := exportHead(prof, p.Now())
	return &exportOutput{
		ContentType:        "application/json",
		ContentDisposition: `attachment; filename="catsrv-export.json"`,
		Body: func(hctx huma.Context) {
			hctx.SetStatus(http.StatusOK)
			if err := writeExport(hctx.BodyWriter(), head, p.Conversations(ctx, c.Subject)); err != nil {
				// The status is sent: all that is left is to log and stop.
				_ = a.authError(ctx, errs.Wrap(errs.KindInternal, err, "export failed"))
			}
		},
	}, nil
}

// exportHead is the document without its conversations.
func exportHead(p privacy.Profile, now time.Time) ExportDocument {
	doc := ExportDocument{UserID: p.UserID, ExportedAt: now.UTC(), Memory: memoryBody(p.Memory)}
	if u := p.Account; u != nil {
		doc.Account = &ExportAccount{ID: u.ID, Provider: u.Provider, Subject: u.Subject, Email: u.Email, Name: u.Name,
			Role: u.Role, CreatedAt: u.CreatedAt.UTC(), UpdatedAt: u.UpdatedAt.UTC()}
	}
	return doc
}

// writeExport writes the document: the head's fields, then
// "conversations" one element at a time, as each is read.
func writeExport(w io.Writer, head ExportDocument, threads func(func(privacy.Thread, error) bool)) error {
	b, err := json.Marshal(struct {
		UserID     string         `json:"user_id"`
		ExportedAt time.Time      `json:"exported_at"`
		Account    *ExportAccount `json:"account"`
		Memory     MemoryResponse `json:"memory"`
	}{head.UserID, head.ExportedAt, head.Account, head.Memory})
	if err != nil {
		return err
	}
	b[len(b)-1] = ',' // the object goes on
	if _, err := w.Write(append(b, `"conversations":[`...)); err != nil {
		return err
	}
	first := true
	for t, err := range threads {
		if err != nil {
			return err
		}
		conv := ExportConversation{ID: t.Conversation.ID, Cat: t.Conversation.Owner.Cat, Name: t.Conversation.Name,
			CreatedAt: t.Conversation.CreatedAt.UTC(), UpdatedAt: t.Conversation.UpdatedAt.UTC(), Messages: make([]ExportMessage, 0, len(t.Messages))}
		for _, m := range t.Messages {
			conv.Messages = append(conv.Messages, ExportMessage{ID: m.ID, Role: m.Role, Content: m.Content, Model: m.Model, Time: m.Time.UTC()})
		}
		b, err := json.Marshal(conv)
		if err != nil {
			return err
		}
		if !first {
			b = append([]byte{','}, b...)
		}
		first = false
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	_, err = io.WriteString(w, "]}\n")
	return err
}
