package httpapi

import (
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/core/auth"
)

// tagAuth groups the /api/v1/auth operations in the document.
const tagAuth = "auth"

// cookieScheme names the session-cookie security scheme in the document.
const cookieScheme = "session_cookie"

// authSecurity: a bearer token, or else the access cookie a login sets.
var authSecurity = []map[string][]string{{bearerScheme: {}}, {cookieScheme: {}}}

// memoryUpdate is the body of POST /api/v1/auth/memory as the document
// shows it. The handler reads the raw bytes (core/auth/prefs validates
// them), so this type exists for the schema only.
type memoryUpdate struct {
	Preferences map[string]any `json:"preferences" doc:"Keys to set; a key set to null is removed."`
}

// documentAuth describes the /api/v1/auth routes in the OpenAPI document.
// They stay plain net/http handlers (registerAuth): they set cookies and
// redirect, which huma handlers do not model well, so the operations are
// added for the document and the generated client only. Keep them in step
// with auth*.go, memory.go and docs/auth.md.
func documentAuth(api huma.API) {
	oapi := api.OpenAPI()
	if oapi.Components.SecuritySchemes == nil {
		oapi.Components.SecuritySchemes = map[string]*huma.SecurityScheme{}
	}
	oapi.Components.SecuritySchemes[cookieScheme] = &huma.SecurityScheme{
		Type: "apiKey", In: "cookie", Name: accessCookie,
		Description: "The access token in the httpOnly cookie a login sets; state-changing requests with it must come from an allowed Origin.",
	}
	oapi.Tags = append(oapi.Tags, &huma.Tag{Name: tagAuth, Description: "Logins, sessions and each user's memory (see docs/auth.md)."})

	schema := func(t reflect.Type) *huma.Schema { return oapi.Components.Schemas.Schema(t, true, "") }
	jsonBody := func(desc string, t reflect.Type) *huma.Response {
		return &huma.Response{Description: desc, Content: map[string]*huma.MediaType{"application/json": {Schema: schema(t)}}}
	}
	catParam := &huma.Param{Name: "catname", In: "query", Description: "The CAT whose settings apply; default: the server's default CAT.",
		Schema: &huma.Schema{Type: huma.TypeString}}
	query := func(name, desc string) *huma.Param {
		return &huma.Param{Name: name, In: "query", Description: desc, Schema: &huma.Schema{Type: huma.TypeString}}
	}
	add := func(op *huma.Operation, ok string, okResp *huma.Response, errors map[int]string) {
		op.Path = AuthPrefix + op.Path
		op.Tags = []string{tagAuth}
		op.Responses = authErrorResponses(schema(reflect.TypeFor[ErrorBody]()), errors)
		op.Responses[ok] = okResp
		oapi.AddOperation(op)
	}

	tooMany := "This client address sent too many login, callback, refresh and logout requests; Retry-After says when to try again."
	for _, p := range auth.Providers {
		id := strings.ReplaceAll(p, "_", "-")
		add(&huma.Operation{
			OperationID: "auth-start-" + id, Method: http.MethodPost, Path: "/" + p,
			Summary:     "Start a login with " + p,
			Description: "Sets the login-state cookie catsrv_login_" + p + " and returns the provider's authorization URL to send the browser to.",
			Parameters:  []*huma.Param{catParam},
		}, "200", jsonBody("The provider's authorization URL.", reflect.TypeFor[StartResponse]()), map[int]string{
			http.StatusBadRequest:          "No CAT named and no default CAT.",
			http.StatusForbidden:           "The provider is disabled for the CAT.",
			http.StatusNotFound:            "Unknown CAT.",
			http.StatusServiceUnavailable:  "The provider's credentials are not set, or authentication is not configured.",
			http.StatusTooManyRequests:     tooMany,
			http.StatusInternalServerError: "The server failed; the cause is logged, not shown.",
		})
		session := jsonBody("The session, when Accept names application/json and not text/html; the refresh token stays in its cookie.",
			reflect.TypeFor[SessionResponse]())
		add(&huma.Operation{
			OperationID: "auth-callback-" + id, Method: http.MethodGet, Path: "/" + p + "/callback",
			Summary: "Finish a login with " + p,
			Description: "The provider redirects here. Checks the login-state cookie, exchanges the code, sets the session cookies " +
				"(catsrv_access, catsrv_refresh), then redirects (303) to the post-login URL or, for JSON clients, answers the session.",
			Parameters: []*huma.Param{
				query("code", "The authorization code."),
				query("state", "The state of the login."),
				query("error", "The provider's error, when it refused the login."),
			},
		}, "200", session, map[int]string{
			http.StatusBadRequest:          "The state cookie is missing, tampered or for another provider, or state does not match.",
			http.StatusUnauthorized:        "The login expired or was replayed, or the provider refused it.",
			http.StatusForbidden:           "The provider is disabled for the CAT.",
			http.StatusServiceUnavailable:  "The provider is unreachable, or authentication is not configured.",
			http.StatusTooManyRequests:     tooMany,
			http.StatusInternalServerError: "The server failed; the cause is logged, not shown.",
		})
		oapi.Paths[AuthPrefix+"/"+p+"/callback"].Get.Responses["303"] = &huma.Response{
			Description: "Logged in: the browser goes to the post-login URL.",
			Headers:     map[string]*huma.Header{"Location": {Description: "The post-login URL.", Schema: &huma.Schema{Type: huma.TypeString}}},
		}
	}

	add(&huma.Operation{
		OperationID: "auth-providers", Method: http.MethodGet, Path: "/providers",
		Summary:     "List the providers a sign-in page may offer",
		Description: "The providers the CAT enables and this server has credentials for.",
		Parameters:  []*huma.Param{catParam},
	}, "200", jsonBody("The usable providers.", reflect.TypeFor[ProvidersResponse]()), map[int]string{
		http.StatusBadRequest:          "No CAT named and no default CAT.",
		http.StatusNotFound:            "Unknown CAT.",
		http.StatusServiceUnavailable:  "Authentication is not configured.",
		http.StatusInternalServerError: "The server failed; the cause is logged, not shown.",
	})
	refreshBodyDoc := &huma.RequestBody{
		Description: "For clients without cookies: the refresh token. Without it, the catsrv_refresh cookie is used.",
		Content:     map[string]*huma.MediaType{"application/json": {Schema: schema(reflect.TypeFor[refreshBody]())}},
	}
	add(&huma.Operation{
		OperationID: "auth-refresh", Method: http.MethodPost, Path: "/refresh",
		Summary:     "Rotate the refresh token and issue a new access token",
		Description: "Sets new session cookies. Presenting a refresh token that was already rotated revokes the whole session.",
		RequestBody: refreshBodyDoc,
	}, "200", jsonBody("The new access token.", reflect.TypeFor[SessionResponse]()), map[int]string{
		http.StatusBadRequest:            "The body is not {\"refresh_token\": \"...\"}.",
		http.StatusUnauthorized:          "The refresh token is missing, unknown, revoked, expired or reused; the cookies are cleared.",
		http.StatusForbidden:             "The cookie came from an origin not allowed (CSRF).",
		http.StatusRequestEntityTooLarge: "The body is too large.",
		http.StatusServiceUnavailable:    "Authentication is not configured.",
		http.StatusTooManyRequests:       tooMany,
		http.StatusInternalServerError:   "The server failed; the cause is logged, not shown.",
	})
	add(&huma.Operation{
		OperationID: "auth-logout", Method: http.MethodPost, Path: "/logout",
		Summary: "Log out",
		Description: "Revokes the refresh family and the access token presented (cookies, bearer token and/or body) and clears the cookies. " +
			"Idempotent: dead or missing tokens are fine.",
		RequestBody: refreshBodyDoc,
		Security:    authSecurity,
	}, "200", jsonBody("Logged out.", reflect.TypeFor[LogoutResponse]()), map[int]string{
		http.StatusBadRequest:            "The body is not {\"refresh_token\": \"...\"}.",
		http.StatusUnauthorized:          "The Authorization header is not a bearer token.",
		http.StatusForbidden:             "A cookie came from an origin not allowed (CSRF).",
		http.StatusRequestEntityTooLarge: "The body is too large.",
		http.StatusServiceUnavailable:    "Authentication is not configured.",
		http.StatusTooManyRequests:       tooMany,
		http.StatusInternalServerError:   "The server failed; the cause is logged, not shown.",
	})

	memory := jsonBody("The caller's whole memory; updated_at is null when it was never set.", reflect.TypeFor[MemoryResponse]())
	memoryErrors := func(extra map[int]string) map[int]string {
		out := map[int]string{
			http.StatusUnauthorized:        "No valid token (bearer or session cookie), or a revoked one.",
			http.StatusServiceUnavailable:  "Authentication is not configured.",
			http.StatusInternalServerError: "The server failed; the cause is logged, not shown.",
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	csrf := "The session cookie came from an origin not allowed (CSRF)."
	add(&huma.Operation{
		OperationID: "auth-get-memory", Method: http.MethodGet, Path: "/memory",
		Summary: "Read the caller's memory", Security: authSecurity,
	}, "200", memory, memoryErrors(nil))
	add(&huma.Operation{
		OperationID: "auth-update-memory", Method: http.MethodPost, Path: "/memory",
		Summary:     "Merge preferences into the caller's memory",
		Description: "Given keys are set, keys set to null removed; a refused update changes nothing.",
		Security:    authSecurity,
		RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
			"application/json": {Schema: schema(reflect.TypeFor[memoryUpdate]())},
		}},
	}, "200", memory, memoryErrors(map[int]string{
		http.StatusForbidden:             csrf,
		http.StatusRequestEntityTooLarge: "A value or the total is over its limit, or the body over twice the total limit.",
		http.StatusUnprocessableEntity: "The body is not JSON, not an object, preferences is missing or not an object, " +
			"a field is unknown, a key is empty, too long or not UTF-8, or there are too many keys.",
	}))
	add(&huma.Operation{
		OperationID: "auth-delete-memory", Method: http.MethodDelete, Path: "/memory",
		Summary: "Clear the caller's memory", Description: "Idempotent.", Security: authSecurity,
	}, "200", memory, memoryErrors(map[int]string{http.StatusForbidden: csrf}))
}

// authErrorResponses documents the error responses of an /api/v1/auth
// operation: all ErrorBody, as authAPI.failWith writes them.
func authErrorResponses(errBody *huma.Schema, descriptions map[int]string) map[string]*huma.Response {
	out := make(map[string]*huma.Response, len(descriptions)+1)
	for status, desc := range descriptions {
		r := &huma.Response{Description: desc, Content: map[string]*huma.MediaType{"application/json": {Schema: errBody}}}
		switch status {
		case http.StatusUnauthorized:
			r.Headers = map[string]*huma.Header{
				"WWW-Authenticate": {Description: "Always Bearer.", Schema: &huma.Schema{Type: huma.TypeString}},
			}
		case http.StatusTooManyRequests:
			r.Headers = map[string]*huma.Header{
				"Retry-After": {Description: "Seconds to wait before the next request is admitted.", Schema: &huma.Schema{Type: huma.TypeInteger}},
			}
		}
		out[strconv.Itoa(status)] = r
	}
	return out
}
