package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

// This file is the one place where failures become HTTP responses: the
// table from core error kinds to status and body, and the shapes huma's own
// errors take.

// AnalyticsErrorCode is the error code of every analytics failure (spec §7).
const AnalyticsErrorCode = "ANALYTICS-ERR-0-WAREHOUSE"

// internalMessage replaces the message of any failure a client must not see
// the inside of.
const internalMessage = "internal error"

// maxDetailItems bounds the list of a validation error, so that a request
// with thousands of bad values cannot make the response as large as itself.
const maxDetailItems = 20

// kindResponse is how one kind of core error is answered.
type kindResponse struct {
	status int
	code   string
	// public: the core's client-safe message is shown; otherwise
	// internalMessage is, and the cause is logged.
	public bool
}

// kindResponses is the table. A kind missing from it is answered as an
// internal error. The spec answers an unknown CAT and bad dates with 500.
var kindResponses = map[errs.Kind]kindResponse{
	errs.KindNotFound:     {http.StatusInternalServerError, AnalyticsErrorCode, true},
	errs.KindInvalid:      {http.StatusInternalServerError, AnalyticsErrorCode, true},
	errs.KindUnauthorized: {http.StatusUnauthorized, "UNAUTHORIZED", true},
	errs.KindForbidden:    {http.StatusForbidden, "FORBIDDEN", true},
	errs.KindUnavailable:  {http.StatusServiceUnavailable, AnalyticsErrorCode, true},
	errs.KindInternal:     {http.StatusInternalServerError, AnalyticsErrorCode, false},
}

// RetryAfterSeconds is the Retry-After of a 503 for a failure that is
// expected to pass (errs.ErrTemporary: a database connection lost, a
// write lock held by an import).
const RetryAfterSeconds = 2

// failureHeaders are the headers that go with err's answer of status: the
// scheme a 401 asks for (RFC 6750), and when to try again after a 503
// that is expected to pass.
func failureHeaders(err error, status int) http.Header {
	switch {
	case status == http.StatusUnauthorized:
		return http.Header{"WWW-Authenticate": {"Bearer"}}
	case status == http.StatusServiceUnavailable && errors.Is(err, errs.ErrTemporary):
		return http.Header{"Retry-After": {strconv.Itoa(RetryAfterSeconds)}}
	}
	return nil
}

// setFailureHeaders adds failureHeaders to a response not yet written.
func setFailureHeaders(w http.ResponseWriter, err error, status int) {
	for k, v := range failureHeaders(err, status) {
		w.Header()[k] = v
	}
}

// authKindResponses is the table of the /api/v1/auth routes, whose errors
// the spec leaves open: plain HTTP semantics, with the ErrorBody shape of
// the analytics routes. The analytics table above is not affected.
var authKindResponses = map[errs.Kind]kindResponse{
	errs.KindInvalid:      {http.StatusBadRequest, "INVALID_REQUEST", true},
	errs.KindNotFound:     {http.StatusNotFound, "NOT_FOUND", true},
	errs.KindUnauthorized: {http.StatusUnauthorized, "UNAUTHORIZED", true},
	errs.KindForbidden:    {http.StatusForbidden, "FORBIDDEN", true},
	errs.KindConflict:     {http.StatusConflict, "CONFLICT", true},
	errs.KindTooLarge:     {http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", true},
	errs.KindUnavailable:  {http.StatusServiceUnavailable, "UNAVAILABLE", true},
	errs.KindRateLimited:  {http.StatusTooManyRequests, "TOO_MANY_REQUESTS", true},
	errs.KindInternal:     {http.StatusInternalServerError, "INTERNAL_ERROR", false},
}

// memoryKindResponses is the auth table for the /memory routes, where an
// update the rules refuse is a validation error (422), not a malformed
// request.
var memoryKindResponses = func() map[errs.Kind]kindResponse {
	t := maps.Clone(authKindResponses)
	t[errs.KindInvalid] = kindResponse{http.StatusUnprocessableEntity, "VALIDATION_ERROR", true}
	return t
}()

// chatKindResponses is the table of the /api/v1/cat routes: plain HTTP
// semantics, a request the rules refuse being a validation error (422).
// Failures of the model service are told apart by chatErrorBody.
var chatKindResponses = func() map[errs.Kind]kindResponse {
	t := maps.Clone(memoryKindResponses)
	t[errs.KindNotFound] = kindResponse{http.StatusNotFound, "NOT_FOUND", true}
	return t
}()

// chatErrorBody answers err by the chat table, except that a model service
// that failed is a bad gateway (502) and one that did not answer in time a
// gateway time-out (504); a model that is not configured stays 503.
func chatErrorBody(ctx context.Context, log *slog.Logger, err error) ErrorBody {
	switch {
	case errors.Is(err, chat.ErrUpstreamTimeout):
		log.LogAttrs(ctx, slog.LevelWarn, "model service timed out", slog.String("error", err.Error()))
		return ErrorBody{Code: "UPSTREAM_TIMEOUT", Status: http.StatusGatewayTimeout, Message: errs.PublicMessage(err, "the model service did not answer in time")}
	case errors.Is(err, chat.ErrUpstreamFailed):
		log.LogAttrs(ctx, slog.LevelWarn, "model service failed", slog.String("error", err.Error()))
		return ErrorBody{Code: "UPSTREAM_FAILED", Status: http.StatusBadGateway, Message: errs.PublicMessage(err, "the model service failed")}
	}
	return errorBodyFor(ctx, log, err, chatKindResponses)
}

// chatError is chatErrorBody as an error huma writes.
func chatError(ctx context.Context, log *slog.Logger, err error) error {
	e := &apiError{ErrorBody: chatErrorBody(ctx, log, err)}
	e.headers = failureHeaders(err, e.Status)
	return e
}

// errorBodyFor answers err by a table, logging the cause of anything not
// shown to the client; unknown kinds are internal errors.
func errorBodyFor(ctx context.Context, log *slog.Logger, err error, table map[errs.Kind]kindResponse) ErrorBody {
	kind := errs.KindOf(err)
	r, ok := table[kind]
	if !ok {
		r = table[errs.KindInternal]
	}
	msg := internalMessage
	switch {
	case !r.public:
		log.LogAttrs(ctx, slog.LevelError, "request failed", slog.String("kind", kind.String()), slog.String("error", err.Error()))
	case kind == errs.KindUnavailable:
		// The client sees the plain message; the operator, the cause.
		msg = errs.PublicMessage(err, internalMessage)
		log.LogAttrs(ctx, slog.LevelWarn, "request refused: unavailable", slog.String("error", err.Error()))
	default:
		msg = errs.PublicMessage(err, internalMessage)
	}
	return ErrorBody{Code: r.code, Status: r.status, Message: msg}
}

// ErrorBody is the application error body of spec §7.
type ErrorBody struct {
	Code    string `json:"error" doc:"Error code, e.g. ANALYTICS-ERR-0-WAREHOUSE, UNAUTHORIZED, FORBIDDEN."`
	Status  int    `json:"status" doc:"HTTP status code."`
	Message string `json:"message" doc:"What went wrong, safe to show."`
}

// apiError is an ErrorBody that huma writes with its status and headers.
type apiError struct {
	ErrorBody
	headers http.Header
}

// Error returns the message.
func (e *apiError) Error() string { return e.Message }

// GetStatus returns the HTTP status, for huma.
func (e *apiError) GetStatus() int { return e.Status }

// GetHeaders returns extra response headers, for huma.
func (e *apiError) GetHeaders() http.Header { return e.headers }

// toHTTP turns a core error into the response of the table, logging the
// cause of anything not shown to the client.
func toHTTP(ctx context.Context, log *slog.Logger, err error) error {
	kind := errs.KindOf(err)
	r, ok := kindResponses[kind]
	if !ok {
		r = kindResponses[errs.KindInternal]
	}
	msg := internalMessage
	switch {
	case !r.public:
		log.LogAttrs(ctx, slog.LevelError, "request failed", slog.String("kind", kind.String()), slog.String("error", err.Error()))
	case kind == errs.KindUnavailable:
		// The client sees the plain message; the operator, the cause.
		msg = errs.PublicMessage(err, internalMessage)
		log.LogAttrs(ctx, slog.LevelWarn, "request refused: unavailable", slog.String("error", err.Error()))
	default:
		msg = errs.PublicMessage(err, internalMessage)
		if r.status >= http.StatusInternalServerError {
			markClientFault(ctx) // the spec's 500 for a caller's mistake
		}
	}
	e := &apiError{ErrorBody: ErrorBody{Code: r.code, Status: r.status, Message: msg}}
	e.headers = failureHeaders(err, r.status)
	return e
}

// ValidationError is the body of a 422, shaped like FastAPI's, which the
// spec shows for a missing catname.
type ValidationError struct {
	Detail []ValidationIssue `json:"detail" nullable:"false" doc:"One entry per problem."`
}

// ValidationIssue is one problem of a request.
type ValidationIssue struct {
	Loc  []any  `json:"loc" nullable:"false" doc:"Where: the location ('query'), the parameter name, then array indexes."`
	Msg  string `json:"msg" doc:"What is wrong."`
	Type string `json:"type" doc:"Kind of problem, e.g. value_error.missing."`
}

// validationError is a ValidationError huma writes with its status.
type validationError struct {
	ValidationError
	status int
}

// Error summarizes the problems.
func (e *validationError) Error() string {
	msgs := make([]string, 0, len(e.Detail))
	for _, d := range e.Detail {
		msgs = append(msgs, d.Msg)
	}
	return "validation failed: " + strings.Join(msgs, "; ")
}

// GetStatus returns the HTTP status, for huma.
func (e *validationError) GetStatus() int { return e.status }

// huma reports a missing required parameter with this message.
const humaMissingSuffix = " parameter is missing"

// specError is the replacement of huma.NewError: errors that carry a
// location (huma's request validation) become a ValidationError, anything
// else an ErrorBody whose code is the status text. Values huma attaches to
// its details are never echoed: they may be huge or hostile.
func specError(status int, msg string, details ...error) huma.StatusError {
	var issues []ValidationIssue
	for _, d := range details {
		var detailer huma.ErrorDetailer
		if d == nil || !errors.As(d, &detailer) || detailer.ErrorDetail().Location == "" {
			continue
		}
		if len(issues) == maxDetailItems {
			break
		}
		issues = append(issues, issue(detailer.ErrorDetail()))
	}
	if len(issues) > 0 {
		return &validationError{ValidationError: ValidationError{Detail: issues}, status: status}
	}
	if status >= http.StatusInternalServerError {
		msg = internalMessage
	}
	return &apiError{ErrorBody: ErrorBody{Code: statusCode(status), Status: status, Message: msg}}
}

// issue turns one huma error detail into a FastAPI-like entry.
func issue(d *huma.ErrorDetail) ValidationIssue {
	out := ValidationIssue{Loc: location(d.Location), Msg: d.Message, Type: "value_error"}
	switch {
	case strings.HasPrefix(d.Message, "required ") && strings.HasSuffix(d.Message, humaMissingSuffix):
		out.Msg, out.Type = "field required", "value_error.missing"
	case d.Message == "invalid integer":
		out.Msg, out.Type = "value is not a valid integer", "type_error.integer"
	}
	return out
}

// location splits huma's "query.model[3]" into ["query", "model", 3].
func location(s string) []any {
	out := []any{}
	for part := range strings.SplitSeq(s, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			out = append(out, name)
		}
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			if n, err := strconv.Atoi(idx); err == nil {
				out = append(out, n)
			} else {
				out = append(out, idx)
			}
			_, rest, _ = strings.Cut(after, "[")
		}
	}
	return out
}

// statusCode names a status the way the error codes of this API read:
// "Not Acceptable" becomes "NOT_ACCEPTABLE".
func statusCode(status int) string {
	text := http.StatusText(status)
	if text == "" {
		return "ERROR"
	}
	return strings.ToUpper(strings.ReplaceAll(text, " ", "_"))
}

// UseSpecErrors makes huma's own errors (request validation, content
// negotiation) take this API's shapes by replacing the package variable
// huma.NewError. It returns a function that puts the previous one back.
// Call it once at start-up, before serving; it is not safe to call while
// requests are served.
func UseSpecErrors() (restore func()) {
	previous := huma.NewError
	huma.NewError = specError
	return func() { huma.NewError = previous }
}
