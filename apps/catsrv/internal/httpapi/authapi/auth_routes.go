package authapi

import (
	"context"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
)

// tagAuth groups the /api/v1/auth operations in the document.
const tagAuth = "auth"

// cookieScheme names the session-cookie security scheme in the document.
const cookieScheme = "session_cookie"

// authSecurity: a bearer token, or else the access cookie a login sets.
var authSecurity = []map[string][]string{{base.BearerScheme: {}}, {cookieScheme: {}}}

// tooMany describes the 429 of the rate-limited operations.
const tooMany = "This client address sent too many login, callback, refresh and logout requests; Retry-After says when to try again."

// internalFailure describes the 500 of every auth operation.
const internalFailure = "The server failed; the cause is logged, not shown."

// Register adds the /api/v1/auth operations, their tag and the
// session-cookie security scheme to api, in one group: every operation
// answers 503 while authentication is not configured (guard). The ones an
// anonymous client can make that write the audit log (start, callback,
// refresh, logout) are rate-limited per client address (the limited
// group); the caller's own operations (memory, erasure, export, and
// logout) find their caller with base.Authenticate (the authenticated
// groups). The bodies of refresh, logout and the memory update are read
// by the handlers (huma does not parse them: their errors are this API's
// own), and documented after registration.
func Register(api huma.API, d Deps) {
	a := newAuthAPI(d)
	oapi := api.OpenAPI()
	oapi.Components.SecuritySchemes[cookieScheme] = &huma.SecurityScheme{
		Type: "apiKey", In: "cookie", Name: base.AccessCookie,
		Description: "The access token in the httpOnly cookie a login sets; state-changing requests with it must come from an allowed Origin.",
	}
	oapi.Tags = append(oapi.Tags, &huma.Tag{Name: tagAuth, Description: "Logins, sessions and each user's memory (see docs/auth.md)."})
	op := newOperation(oapi)

	g := huma.NewGroup(api, Prefix)
	g.UseMiddleware(base.WithRequest, a.guard)
	limited := huma.NewGroup(g)
	limited.UseMiddleware(a.limited)
	authed := authenticated(g)
	limitedAuthed := authenticated(limited)

	for _, p := range d.names() {
		huma.Register(limited, startOperation(op, p), func(ctx context.Context, in *catQuery) (*startOutput, error) { return a.start(ctx, in, p) })
		huma.Register(limited, callbackOperation(oapi, op, p), func(ctx context.Context, in *callbackInput) (*callbackOutput, error) { return a.callback(ctx, in, p) })
	}
	huma.Register(g, providersOperation(op), a.listProviders)
	huma.Register(limited, refreshOperation(op), a.refresh)
	huma.Register(limitedAuthed, logoutOperation(op), a.logout)
	huma.Register(authed, getMemoryOperation(op), a.getMemory)
	huma.Register(authed, updateMemoryOperation(op), a.postMemory)
	huma.Register(authed, deleteMemoryOperation(op), a.deleteMemory)
	huma.Register(authed, eraseMeOperation(op), a.eraseMe)
	huma.Register(authed, eraseUserOperation(op), a.eraseUser)
	huma.Register(authed, exportMeOperation(op), a.exportMe)

	documentRegistered(oapi, d.names())
	liftHeaderDescriptions(oapi)
	// The login flow's operations (start, callback, providers, refresh)
	// need no credentials: they declare no security of their own.
	base.DeclarePublic(oapi, Prefix)
}

// authenticated returns a group of g whose operations find their caller
// with base.Authenticate and declare a bearer token or the session cookie.
func authenticated(g huma.API) *huma.Group {
	authed := huma.NewGroup(g)
	authed.UseMiddleware(base.Authenticate)
	authed.UseSimpleModifier(func(o *huma.Operation) { o.Security = authSecurity })
	return authed
}

// operation describes one /api/v1/auth operation: its path under Prefix,
// the tag and its error responses.
type operation func(id, method, path, summary, desc string, errors map[int]string) huma.Operation

func newOperation(oapi *huma.OpenAPI) operation {
	errBody := oapi.Components.Schemas.Schema(reflect.TypeFor[base.ErrorBody](), true, "ErrorBody")
	return func(id, method, path, summary, desc string, errors map[int]string) huma.Operation {
		return huma.Operation{
			OperationID: id, Method: method, Path: path, Summary: summary, Description: desc,
			Tags: []string{tagAuth}, Responses: authErrorResponses(errBody, errors),
		}
	}
}

func startOperation(op operation, p string) huma.Operation {
	return op("auth-start-"+strings.ReplaceAll(p, "_", "-"), http.MethodPost, "/"+p, "Start a login with "+p,
		"Sets the login-state cookie catsrv_login_"+p+" and returns the provider's authorization URL to send the browser to.",
		map[int]string{
			http.StatusBadRequest:          "No CAT named and no default CAT.",
			http.StatusForbidden:           "The provider is disabled for the CAT.",
			http.StatusNotFound:            "Unknown CAT.",
			http.StatusServiceUnavailable:  "The provider's credentials are not set, it is unreachable or its discovery document cannot be used, or authentication is not configured.",
			http.StatusTooManyRequests:     tooMany,
			http.StatusInternalServerError: internalFailure,
		})
}

func callbackOperation(oapi *huma.OpenAPI, op operation, p string) huma.Operation {
	callback := op("auth-callback-"+strings.ReplaceAll(p, "_", "-"), http.MethodGet, "/"+p+"/callback", "Finish a login with "+p,
		"The provider redirects here. Checks the login-state cookie, exchanges the code, sets the session cookies "+
			"(catsrv_access, catsrv_refresh), then redirects (303) to the post-login URL or, for JSON clients, answers the session.",
		map[int]string{
			http.StatusBadRequest:          "The state cookie is missing, tampered or for another provider, or state does not match.",
			http.StatusUnauthorized:        "The login expired or was replayed, or the provider refused it, or its ID token was refused.",
			http.StatusForbidden:           "The provider is disabled for the CAT.",
			http.StatusServiceUnavailable:  "The provider is unreachable, or authentication is not configured.",
			http.StatusTooManyRequests:     tooMany,
			http.StatusInternalServerError: internalFailure,
		})
	for status, r := range callback.Responses {
		if status != strconv.Itoa(http.StatusTooManyRequests) {
			// A failed login clears its state cookie (the guard's 503,
			// before the login is looked at, does not).
			addHeader(r, "Set-Cookie", "The login-state cookie, cleared.")
		}
	}
	callback.Parameters = []*huma.Param{cookieParam(stateCookiePrefix+p, "The login-state cookie the start of the login set.")}
	callback.Responses["200"] = &huma.Response{
		Description: "The session, when Accept names application/json and not text/html; the refresh token stays in its cookie.",
		Content: map[string]*huma.MediaType{"application/json": {
			Schema: oapi.Components.Schemas.Schema(reflect.TypeFor[SessionResponse](), true, ""),
		}},
	}
	callback.Responses["303"] = &huma.Response{Description: "Logged in: the browser goes to the post-login URL."}
	addHeader(callback.Responses["303"], "Location", "The post-login URL.")
	addHeader(callback.Responses["303"], "Set-Cookie", "The session cookies catsrv_access and catsrv_refresh; the login-state cookie, cleared.")
	return callback
}

func providersOperation(op operation) huma.Operation {
	return op("auth-providers", http.MethodGet, "/providers", "List the providers a sign-in page may offer",
		"The providers the CAT enables and this server has credentials for.",
		map[int]string{
			http.StatusBadRequest:          "No CAT named and no default CAT.",
			http.StatusNotFound:            "Unknown CAT.",
			http.StatusServiceUnavailable:  "Authentication is not configured.",
			http.StatusInternalServerError: internalFailure,
		})
}

func refreshOperation(op operation) huma.Operation {
	refresh := op("auth-refresh", http.MethodPost, "/refresh", "Rotate the refresh token and issue a new access token",
		"Sets new session cookies. Presenting a refresh token that was already rotated revokes the whole session.",
		map[int]string{
			http.StatusBadRequest:            "The body is not {\"refresh_token\": \"...\"}.",
			http.StatusUnauthorized:          "The refresh token is missing, unknown, revoked, expired or reused; the cookies are cleared.",
			http.StatusForbidden:             "The cookie came from an origin not allowed (CSRF).",
			http.StatusRequestEntityTooLarge: "The body is too large.",
			http.StatusServiceUnavailable:    "Authentication is not configured.",
			http.StatusTooManyRequests:       tooMany,
			http.StatusInternalServerError:   internalFailure,
		})
	addHeader(refresh.Responses["401"], "Set-Cookie", "catsrv_access and catsrv_refresh, cleared.")
	return refresh
}

func logoutOperation(op operation) huma.Operation {
	return op("auth-logout", http.MethodPost, "/logout", "Log out",
		"Revokes the refresh family and the access token presented (cookies, bearer token and/or body) and clears the cookies. "+
			"Idempotent: dead or missing tokens are fine.",
		map[int]string{
			http.StatusBadRequest:            "The body is not {\"refresh_token\": \"...\"}.",
			http.StatusUnauthorized:          "The Authorization header is not a bearer token.",
			http.StatusForbidden:             "A cookie came from an origin not allowed (CSRF).",
			http.StatusRequestEntityTooLarge: "The body is too large.",
			http.StatusServiceUnavailable:    "Authentication is not configured.",
			http.StatusTooManyRequests:       tooMany,
			http.StatusInternalServerError:   internalFailure,
		})
}

// memoryErrors are the error responses of the memory operations: these
// and the extra ones.
func memoryErrors(extra map[int]string) map[int]string {
	out := map[int]string{
		http.StatusUnauthorized:        "No valid token (bearer or session cookie), or a revoked one.",
		http.StatusServiceUnavailable:  "Authentication is not configured.",
		http.StatusInternalServerError: internalFailure,
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

const (
	csrf       = "The session cookie came from an origin not allowed (CSRF)."
	memoryDesc = "The caller's whole memory; updated_at is null when it was never set."
)

func getMemoryOperation(op operation) huma.Operation {
	return op("auth-get-memory", http.MethodGet, "/memory", "Read the caller's memory", "", memoryErrors(nil))
}

func updateMemoryOperation(op operation) huma.Operation {
	return op("auth-update-memory", http.MethodPost, "/memory", "Merge preferences into the caller's memory",
		"Given keys are set, keys set to null removed; a refused update changes nothing.",
		memoryErrors(map[int]string{
			http.StatusForbidden:             csrf,
			http.StatusRequestEntityTooLarge: "A value or the total is over its limit, or the body over twice the total limit.",
			http.StatusUnprocessableEntity: "The body is not JSON, not an object, preferences is missing or not an object, " +
				"a field is unknown, a key is empty, too long or not UTF-8, or there are too many keys.",
		}))
}

func deleteMemoryOperation(op operation) huma.Operation {
	return op("auth-delete-memory", http.MethodDelete, "/memory", "Clear the caller's memory", "Idempotent.",
		memoryErrors(map[int]string{http.StatusForbidden: csrf}))
}

// documentRegistered describes what huma cannot be told before
// registration: the 200s it names "OK", and the request bodies the
// handlers read themselves.
func documentRegistered(oapi *huma.OpenAPI, providers []string) {
	for _, p := range providers {
		setDescription(oapi, Prefix+"/"+p, http.MethodPost, "200", "The provider's authorization URL.")
	}
	setDescription(oapi, Prefix+"/providers", http.MethodGet, "200", "The usable providers.")
	refreshDoc := &huma.RequestBody{
		Description: "For clients without cookies: the refresh token. Without it, the catsrv_refresh cookie is used.",
		Content: map[string]*huma.MediaType{"application/json": {
			Schema: oapi.Components.Schemas.Schema(reflect.TypeFor[refreshBody](), true, ""),
		}},
	}
	documentBody(oapi, Prefix+"/refresh", http.MethodPost, "The new access token.", refreshDoc)
	documentBody(oapi, Prefix+"/logout", http.MethodPost, "Logged out.", refreshDoc)
	setDescription(oapi, Prefix+"/memory", http.MethodGet, "200", memoryDesc)
	documentBody(oapi, Prefix+"/memory", http.MethodPost, memoryDesc, &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
		"application/json": {Schema: oapi.Components.Schemas.Schema(reflect.TypeFor[memoryUpdate](), true, "")},
	}})
	setDescription(oapi, Prefix+"/memory", http.MethodDelete, "200", memoryDesc)
	documentPrivacy(oapi)
}

// liftHeaderDescriptions moves the doc of the header fields of the auth
// operations' outputs, which huma puts on the header's schema, to the
// header itself, where readers of the document look.
func liftHeaderDescriptions(oapi *huma.OpenAPI) {
	for path, item := range oapi.Paths {
		if !strings.HasPrefix(path, Prefix+"/") {
			continue
		}
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Delete} {
			if op == nil {
				continue
			}
			for _, r := range op.Responses {
				for _, h := range r.Headers {
					if h.Description == "" && h.Schema != nil {
						h.Description, h.Schema.Description = h.Schema.Description, ""
					}
				}
			}
		}
	}
}

// addHeader documents a string header of a response.
func addHeader(r *huma.Response, name, desc string) {
	if r.Headers == nil {
		r.Headers = map[string]*huma.Header{}
	}
	r.Headers[name] = &huma.Header{Description: desc, Schema: &huma.Schema{Type: huma.TypeString}}
}

// cookieParam documents a cookie an operation reads.
func cookieParam(name, desc string) *huma.Param {
	return &huma.Param{Name: name, In: "cookie", Description: desc, Schema: &huma.Schema{Type: huma.TypeString}}
}

// setDescription sets the description of a registered operation's
// response (huma names a 200 "OK").
func setDescription(oapi *huma.OpenAPI, path, method, status, desc string) {
	operationAt(oapi, path, method).Responses[status].Description = desc
}

// operationAt returns the registered operation of path and method.
func operationAt(oapi *huma.OpenAPI, path, method string) *huma.Operation {
	item := oapi.Paths[path]
	switch method {
	case http.MethodGet:
		return item.Get
	case http.MethodPost:
		return item.Post
	case http.MethodDelete:
		return item.Delete
	}
	panic("operationAt: no " + method + " operations here")
}

// documentBody adds the request body that the handler of a registered
// operation reads itself, and describes its 200. Given before
// registration, huma would parse and validate the body.
func documentBody(oapi *huma.OpenAPI, path, method, ok string, body *huma.RequestBody) {
	operationAt(oapi, path, method).RequestBody = body
	setDescription(oapi, path, method, "200", ok)
}

// authErrorResponses documents the error responses of an /api/v1/auth
// operation: all ErrorBody, as base.ErrorFor and authAPI.fail write them.
func authErrorResponses(errBody *huma.Schema, descriptions map[int]string) map[string]*huma.Response {
	out := make(map[string]*huma.Response, len(descriptions)+1)
	for status, desc := range descriptions {
		r := &huma.Response{Description: desc, Content: map[string]*huma.MediaType{"application/json": {Schema: errBody}}}
		retry := map[int]string{
			http.StatusTooManyRequests:    "Seconds to wait before the next request is admitted.",
			http.StatusServiceUnavailable: "Seconds to wait before trying again, when the failure is expected to pass.",
		}
		switch {
		case status == http.StatusUnauthorized:
			addHeader(r, "WWW-Authenticate", "Always Bearer.")
		case retry[status] != "":
			r.Headers = map[string]*huma.Header{"Retry-After": {Description: retry[status], Schema: &huma.Schema{Type: huma.TypeInteger}}}
		}
		out[strconv.Itoa(status)] = r
	}
	return out
}
