package base

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

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

// KindResponse is how one kind of core error is answered.
type KindResponse struct {
	status int
	code   string
	// public: the core's client-safe message is shown; otherwise
	// internalMessage is, and the cause is logged.
	public bool
}

// analyticsKinds is the table of the analytics routes. A kind missing from
// a table is answered as an internal error. The spec answers an unknown CAT
// and bad dates with 500.
var analyticsKinds = map[errs.Kind]KindResponse{
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

// FailureHeaders are the headers that go with err's answer of status: the
// scheme a 401 asks for (RFC 6750), when to try again after a 503 that is
// expected to pass, and after a 429 whose cause knows when it ends (a
// spent token budget, chat.BudgetError: whole seconds, rounded up).
func FailureHeaders(err error, status int) http.Header {
	var until interface{ RetryIn() time.Duration }
	switch {
	case status == http.StatusUnauthorized:
		return http.Header{"WWW-Authenticate": {"Bearer"}}
	case status == http.StatusServiceUnavailable && errors.Is(err, errs.ErrTemporary):
		return http.Header{"Retry-After": {strconv.Itoa(RetryAfterSeconds)}}
	case status == http.StatusTooManyRequests && errors.As(err, &until):
		secs := max(int64((until.RetryIn()+time.Second-1)/time.Second), 1)
		return http.Header{"Retry-After": {strconv.FormatInt(secs, 10)}}
	}
	return nil
}

// SetFailureHeaders adds FailureHeaders to a response not yet written.
func SetFailureHeaders(w http.ResponseWriter, err error, status int) {
	for k, v := range FailureHeaders(err, status) {
		w.Header()[k] = v
	}
}

// AuthKinds is the table of the /api/v1/auth routes, whose errors the
// spec leaves open: plain HTTP semantics, with the ErrorBody shape of the
// analytics routes. The analytics table above is not affected.
var AuthKinds = map[errs.Kind]KindResponse{
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

// MemoryKinds is the auth table for the /memory routes, where an update
// the rules refuse is a validation error (422), not a malformed request.
var MemoryKinds = func() map[errs.Kind]KindResponse {
	t := maps.Clone(AuthKinds)
	t[errs.KindInvalid] = KindResponse{http.StatusUnprocessableEntity, "VALIDATION_ERROR", true}
	return t
}()

// ChatKinds is the table of the /api/v1/cat routes: plain HTTP semantics,
// a request the rules refuse being a validation error (422). The chat
// routes tell failures of the model service apart before using it.
var ChatKinds = func() map[errs.Kind]KindResponse {
	t := maps.Clone(MemoryKinds)
	t[errs.KindNotFound] = KindResponse{http.StatusNotFound, "NOT_FOUND", true}
	return t
}()

// IngestKinds is the table of the ingestion route (POST
// /api/v1/analytics/interactions), which the spec does not know: plain
// HTTP semantics as on the chat routes, an unknown CAT 404, a batch over
// the limits 413.
var IngestKinds = ChatKinds

// ErrorBodyFor answers err by a table, logging the cause of anything not
// shown to the client; unknown kinds are internal errors.
func ErrorBodyFor(ctx context.Context, log *slog.Logger, err error, table map[errs.Kind]KindResponse) ErrorBody {
	return bodyFor(ctx, log, err, table, false)
}

// bodyFor is ErrorBodyFor; with spec500s, a public 5xx other than 503 is
// the spec's answer to a caller's mistake (an unknown CAT, a bad date), so
// the request is logged as the caller's fault.
func bodyFor(ctx context.Context, log *slog.Logger, err error, table map[errs.Kind]KindResponse, spec500s bool) ErrorBody {
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
		if spec500s && r.status >= http.StatusInternalServerError {
			markClientFault(ctx) // the spec's 500 for a caller's mistake
		}
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

// NewError is an error huma writes as body, with its status and the given
// extra headers (nil: none).
func NewError(body ErrorBody, headers http.Header) error {
	return &apiError{ErrorBody: body, headers: headers}
}

// ErrorFor is err answered by a table (ErrorBodyFor), with the headers
// of its status (FailureHeaders) and cookies to set (to clear a dead
// session or login, say), as huma writes it.
func ErrorFor(ctx context.Context, log *slog.Logger, err error, table map[errs.Kind]KindResponse, cookies ...http.Cookie) error {
	e := &apiError{ErrorBody: ErrorBodyFor(ctx, log, err, table)}
	e.headers = FailureHeaders(err, e.Status)
	for _, c := range cookies {
		if e.headers == nil {
			e.headers = http.Header{}
		}
		e.headers.Add("Set-Cookie", c.String())
	}
	return e
}

// AnalyticsError turns a core error into the response of the analytics
// table, logging the cause of anything not shown to the client.
func AnalyticsError(ctx context.Context, log *slog.Logger, err error) error {
	body := bodyFor(ctx, log, err, analyticsKinds, true)
	return &apiError{ErrorBody: body, headers: FailureHeaders(err, body.Status)}
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

// NewValidationError is a ValidationError huma writes with status, for a
// handler that finds problems huma's validation cannot (the lines of a
// body it decodes itself).
func NewValidationError(status int, detail []ValidationIssue) error {
	return &validationError{ValidationError: ValidationError{Detail: detail}, status: status}
}

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

// OpenAIKinds is the table of the OpenAI-compatible /v1 routes: plain
// HTTP semantics as OpenAI's API answers (a refused request 400, a rate
// limit 429); package openaiapi writes the status in OpenAI's error shape.
var OpenAIKinds = AuthKinds
