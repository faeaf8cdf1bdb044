package analyticsapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/codec/jsonl"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
)

// IngestLimits bound one batch of POST /interactions.
type IngestLimits struct {
	// MaxBytes bounds the body; 0 means DefaultIngestMaxBytes.
	MaxBytes int64
	// MaxLines bounds the interactions (blank lines aside); 0 means
	// DefaultIngestMaxLines.
	MaxLines int
}

// The limits of a batch when none are configured (the defaults of
// CATSRV_INGEST_MAX_BYTES and CATSRV_INGEST_MAX_LINES).
const (
	DefaultIngestMaxBytes = 16 << 20
	DefaultIngestMaxLines = 10000
)

// ingestAttempts bounds how often a batch is offered to the log when the
// log answers with a temporary failure, such as a concurrent request
// having stored some of the same interaction ids first: the batch is in
// memory, and a store skips the ids already stored, so running it again
// is safe. Twice: a busy database has already made the first attempt
// wait (up to 30 s on SQLite).
const ingestAttempts = 2

// maxNamedLines bounds the lines a 422 names.
const maxNamedLines = 20

// registerIngest adds POST /interactions.
func registerIngest(api huma.API, s *routes) {
	oapi := api.OpenAPI()
	record := oapi.Components.Schemas.Schema(reflect.TypeFor[IngestRecord](), true, "IngestRecord")
	op := huma.Operation{
		OperationID: "ingestInteractions",
		Method:      http.MethodPost,
		Path:        "/interactions",
		Summary:     "Ingest interactions",
		Description: "Stores a batch of interactions in the import format of catsrv import, all or nothing: any invalid line " +
			"and nothing is stored (422 naming the lines). An interaction whose interaction_id the CAT already has is " +
			"skipped, so a retried batch never counts twice. What is stored is seen by every analytics route at once. " +
			"Needs an admin token or an ingest token naming the CAT (catsrv token --role ingest --cats ...).",
		Tags:          []string{tagAnalytics},
		Security:      adminOnly,
		DefaultStatus: http.StatusOK,
		Metadata:      map[string]any{base.IngestsMetadata: true, base.OwnBodyMetadata: true},
		Responses: base.DocumentErrors(api, ingestErrors, http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
			http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity,
			http.StatusInternalServerError, http.StatusServiceUnavailable),
		Middlewares: huma.Middlewares{keepBody},
	}
	huma.Register(api, op, s.ingest)
	// Documented only once registered: with a request body in the
	// operation, huma would read and check the body itself, buffering it
	// whole, before the handler decodes it as it streams in.
	api.OpenAPI().Paths[Prefix+op.Path].Post.RequestBody = &huma.RequestBody{
		Required:    true,
		Description: "JSON Lines (one interaction object a line) or a JSON array of interaction objects.",
		Content: map[string]*huma.MediaType{
			contentNDJSON: {Schema: &huma.Schema{Type: huma.TypeString,
				Description: "One IngestRecord object a line; blank lines are skipped."}},
			contentJSON: {Schema: &huma.Schema{Type: huma.TypeArray, Items: record}},
		},
	}
}

// requestBody is what keepBody hands the handler: the body unread.
type requestBody struct {
	r             io.Reader
	contentType   string
	contentLength int64 // -1: unknown
}

type requestBodyKey struct{}

// keepBody passes the request body to the handler unread, so that it is
// decoded as it streams in, within the limits, rather than buffered whole
// by huma first.
func keepBody(ctx huma.Context, next func(huma.Context)) {
	length := int64(-1)
	if v := ctx.Header("Content-Length"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			length = n
		}
	}
	body := requestBody{r: ctx.BodyReader(), contentType: ctx.Header("Content-Type"), contentLength: length}
	next(huma.WithValue(ctx, requestBodyKey{}, body))
}

func (s *routes) ingest(ctx context.Context, in *ingestInput) (*base.Body[IngestBody], error) {
	fail := func(err error) error { return base.ErrorFor(ctx, s.log, err, base.IngestKinds) }
	who, whoErr := base.CallerOf(ctx)
	if err := auth.MayIngest(in.Cat, who, whoErr); err != nil {
		return nil, fail(err)
	}
	_, cat, err := s.reporter.Resolve(ctx, reporter.Request{Cat: in.Cat})
	if err != nil {
		return nil, fail(err)
	}
	if s.ingestLog == nil {
		return nil, fail(errs.New(errs.KindUnavailable, "ingestion is not configured on this server"))
	}
	body, _ := ctx.Value(requestBodyKey{}).(requestBody)
	decode, err := bodyDecoder(body.contentType)
	if err != nil {
		return nil, err
	}
	limits := s.limits
	if body.contentLength > limits.MaxBytes {
		return nil, fail(tooManyBytes(limits))
	}
	capped := &cappedReader{r: body.r, left: limits.MaxBytes}
	if body.r == nil {
		capped.r = http.NoBody
	}
	batch, invalid, err := readBatch(decode(capped, in.Cat), in.Cat, limits)
	if capped.over {
		return nil, fail(tooManyBytes(limits))
	}
	if errors.Is(err, errBodyUnread) {
		return nil, err
	}
	if err != nil {
		return nil, fail(err)
	}
	if invalid.count > 0 {
		return nil, invalid.response()
	}
	for k := range batch {
		batch[k] = cat.Priced(batch[k])
	}
	stored, err := s.store(ctx, batch)
	if err != nil {
		return nil, fail(err)
	}
	return &base.Body[IngestBody]{Body: IngestBody{Lines: len(batch), Stored: stored, AlreadyStored: len(batch) - stored}}, nil
}

// store appends the batch, again when the log answers with a temporary
// failure (busy, or a concurrent request stored some of the ids first).
func (s *routes) store(ctx context.Context, batch []analytics.Interaction) (int, error) {
	for attempt := 1; ; attempt++ {
		n, err := s.ingestLog.Append(ctx, analytics.Each(batch))
		if err == nil || attempt == ingestAttempts || !errors.Is(err, errs.ErrTemporary) || ctx.Err() != nil {
			return n, err
		}
	}
}

// bodyDecoder picks the decoder of a Content-Type.
func bodyDecoder(contentType string) (func(io.Reader, string) iter.Seq[jsonl.Line], error) {
	media, _, err := mime.ParseMediaType(contentType)
	switch {
	case err != nil:
	case media == contentNDJSON:
		return jsonl.DecodeFor, nil
	case media == contentJSON:
		return jsonl.DecodeArrayFor, nil
	}
	return nil, base.NewError(base.ErrorBody{Code: "UNSUPPORTED_MEDIA_TYPE", Status: http.StatusUnsupportedMediaType,
		Message: "send the batch as " + contentNDJSON + " (JSON Lines) or " + contentJSON + " (an array)"}, nil)
}

func tooManyBytes(l IngestLimits) error {
	return errs.New(errs.KindTooLarge, "the batch is larger than %d bytes, the most this server accepts: nothing was stored, send smaller batches", l.MaxBytes)
}

// readBatch reads every line of a batch: the interactions when all are
// valid and of cat, otherwise what is wrong with them. It stops with a
// too-large error past l.MaxLines interactions.
func readBatch(lines iter.Seq[jsonl.Line], cat string, l IngestLimits) ([]analytics.Interaction, *invalidLines, error) {
	var batch []analytics.Interaction
	invalid := &invalidLines{}
	count := 0
	for line := range lines {
		if line.No == jsonl.ReadFailed {
			return nil, invalid, errBodyUnread
		}
		count++
		if count > l.MaxLines {
			return nil, invalid, errs.New(errs.KindTooLarge, "the batch has more than %d interactions, the most this server accepts: nothing was stored, send smaller batches", l.MaxLines)
		}
		err := line.Err
		if err == nil && line.Interaction.Cat != cat {
			err = errs.New(errs.KindInvalid, "field cat: %q is not the catname of the request; leave cat out or make it %q", clip(line.Interaction.Cat), clip(cat))
		}
		if err != nil {
			invalid.add(line.No, err)
			continue
		}
		if invalid.count == 0 {
			batch = append(batch, line.Interaction)
		}
	}
	return batch, invalid, nil
}

// errBodyUnread answers a body that could not be read to its end (the
// client went away, or was too slow for the server's read timeout).
var errBodyUnread = base.NewError(base.ErrorBody{Code: "BAD_REQUEST", Status: http.StatusBadRequest,
	Message: "the body could not be read to its end; nothing was stored"}, nil)

// invalidLines are the invalid lines of a batch: the first maxNamedLines
// and how many in all.
type invalidLines struct {
	named []base.ValidationIssue
	count int
}

// fieldOfMessage finds the field a line's error is about: the codec and
// analytics.Validate word them "missing field: x" and "field x ...".
var fieldOfMessage = regexp.MustCompile(`^(?:missing field: |field )([a-z_]+)`)

func (v *invalidLines) add(no int, err error) {
	v.count++
	if len(v.named) == maxNamedLines {
		return
	}
	msg := errs.PublicMessage(err, "invalid line")
	loc := []any{"body", no}
	if m := fieldOfMessage.FindStringSubmatch(msg); m != nil {
		loc = append(loc, m[1])
	}
	v.named = append(v.named, base.ValidationIssue{Loc: loc, Msg: fmt.Sprintf("line %d: %s", no, msg), Type: "value_error"})
}

// response is the 422 naming the invalid lines.
func (v *invalidLines) response() error {
	detail := v.named
	if more := v.count - len(v.named); more > 0 {
		detail = append(detail, base.ValidationIssue{Loc: []any{"body"},
			Msg: fmt.Sprintf("and %d more invalid lines", more), Type: "value_error"})
	}
	return base.NewValidationError(http.StatusUnprocessableEntity, detail)
}

// cappedReader reads at most left bytes of r and reports (over) a body
// that has more.
type cappedReader struct {
	r    io.Reader
	left int64
	over bool
}

// errOverLimit ends the reading of a body past its limit.
var errOverLimit = errors.New("body over the limit")

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			c.over = true
			return 0, errOverLimit
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// clip shortens a value quoted back in an error message.
func clip(s string) string {
	if len(s) > 64 {
		return strings.ToValidUTF8(s[:64], "") + "..."
	}
	return s
}
