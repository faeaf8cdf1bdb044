// Package docsapi serves /api/v1/cat/documents: an admin uploads, lists,
// reads and deletes the documents a CAT answers from (Markdown, plain
// text or HTML files, or a title and text as JSON). Retrieval itself is
// core/knowledge/retrieval; this package is its HTTP edge.
package docsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/core/knowledge"
	"github.com/catsrv/catsrv/core/knowledge/retrieval"
	"github.com/catsrv/catsrv/ports"
)

// Prefix is the path of the documents routes.
const Prefix = "/api/v1/cat/documents"

const tagDocuments = "documents"

// Deps are what the documents routes need; nil Documents answers 503.
type Deps struct {
	Documents *retrieval.Service
	Cats      ports.CatDirectory
	// DefaultCat is the CAT of a request without ?catname=.
	DefaultCat string
	Logger     *slog.Logger
}

type docsAPI struct {
	d   Deps
	log *slog.Logger
}

// Register adds the documents routes and their tag to api.
func Register(api huma.API, d Deps) {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	api.OpenAPI().Tags = append(api.OpenAPI().Tags, &huma.Tag{Name: tagDocuments,
		Description: "The documents a CAT answers from, with citations (admin): upload, list, read, delete."})
	a := &docsAPI{d: d, log: log}
	g := huma.NewGroup(api, Prefix)
	g.UseMiddleware(base.WithRequest, base.Authenticate)
	g.UseModifier(func(op *huma.Operation, next func(*huma.Operation)) {
		op.Tags, op.Security = []string{tagDocuments}, security
		op.Description += " Needs role admin."
		next(op)
	})
	huma.Register(g, upload(api), a.upload)
	// Documented once registered, so huma leaves the body to the handler
	// (a multipart form or JSON, told apart by its type).
	api.OpenAPI().Paths[Prefix].Post.RequestBody = uploadBody(api)
	huma.Register(g, op(api, "listDocuments", http.MethodGet, "", "List a CAT's documents", "Oldest first, without their chunks."), a.list)
	huma.Register(g, op(api, "getDocument", http.MethodGet, "/{id}", "Get a document with its chunks", "The document and its chunks in order, each with its heading path, text, tokens and content hash."), a.get)
	huma.Register(g, op(api, "deleteDocument", http.MethodDelete, "/{id}", "Delete a document", "Removes the document, its chunks, their keyword index entries and vectors, and cached embeddings no other chunk needs, at once: no later answer cites it.", http.StatusNoContent), a.remove)
}

var security = []map[string][]string{{base.BearerScheme: {}}}

var docErrors = map[int]base.ErrorDoc{
	http.StatusUnauthorized:          {Description: "No valid token (bearer or session cookie), or a revoked one.", Shape: base.PlainError},
	http.StatusForbidden:             {Description: "The caller is not an admin, or a session cookie on a state-changing request from an origin not allowed (CSRF).", Shape: base.PlainError},
	http.StatusNotFound:              {Description: "The CAT is not configured, or it has no document with this id.", Shape: base.PlainError},
	http.StatusRequestEntityTooLarge: {Description: "The document is larger than 10 MiB.", Shape: base.PlainError},
	http.StatusUnsupportedMediaType:  {Description: "The body is neither multipart/form-data nor JSON.", Shape: base.EitherError},
	http.StatusUnprocessableEntity: {Description: "The document breaks a rule (no file part, empty, not UTF-8 text, a format other than Markdown, text or HTML, " +
		"no words): ErrorBody VALIDATION_ERROR naming the field; a parameter that breaks the schema: ValidationError.", Shape: base.EitherError},
	http.StatusInternalServerError: {Description: "The server failed; the cause is logged, not shown.", Shape: base.PlainError},
	http.StatusServiceUnavailable:  {Description: "Documents are not configured on this server, or, with Retry-After, the database is unreachable for now.", Shape: base.PlainError},
}

func op(api huma.API, id, method, path, summary, desc string, status ...int) huma.Operation {
	o := huma.Operation{
		OperationID: id, Method: method, Path: path, Summary: summary, Description: desc,
		Responses: base.DocumentErrors(api, docErrors, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
			http.StatusUnprocessableEntity, http.StatusInternalServerError, http.StatusServiceUnavailable),
	}
	if len(status) > 0 {
		o.DefaultStatus = status[0]
	}
	return o
}

// maxUploadBytes bounds the request body of an upload: the document plus
// the multipart framing.
const maxUploadBytes = retrieval.MaxDocumentBytes + 64<<10

func upload(api huma.API) huma.Operation {
	o := op(api, "uploadDocument", http.MethodPost, "", "Upload a document",
		"A multipart/form-data body with a `file` part (Markdown, plain text or HTML, by the file name's extension or the part's type; "+
			"optional `title` and `url` fields), or a JSON body {title, text, url?} (the text read as Markdown). "+
			"The document is chunked by its structure, indexed for keyword search and embedded when the CAT has an embeddings endpoint. "+
			"Its id derives from its content: the same content again answers 200 with the same id and is not stored or embedded again.")
	o.DefaultStatus = http.StatusCreated
	o.MaxBodyBytes = maxUploadBytes
	o.Responses = base.DocumentErrors(api, docErrors, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
		http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity, http.StatusInternalServerError, http.StatusServiceUnavailable)
	o.Responses["200"] = &huma.Response{Description: "The same content was already stored: its document.",
		Content: map[string]*huma.MediaType{"application/json": {Schema: api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[DocumentSummary](), true, "")}}}
	return o
}

func uploadBody(api huma.API) *huma.RequestBody {
	return &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
		"multipart/form-data": {Schema: &huma.Schema{Type: huma.TypeObject, Required: []string{"file"}, Properties: map[string]*huma.Schema{
			"file":  {Type: huma.TypeString, Description: "The document (a file part): Markdown (.md), plain text (.txt) or HTML (.html), UTF-8."},
			"title": {Type: huma.TypeString, MaxLength: ptr(300), Description: "Title; else the document's first heading (or HTML title), else the file name."},
			"url":   {Type: huma.TypeString, MaxLength: ptr(2000), Description: "Where readers find the original; given back in sources."},
		}}},
		"application/json": {Schema: api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[TextDocument](), true, "")},
	}}
}

func ptr[T any](v T) *T { return &v }

// CatParam names the CAT.
type CatParam struct {
	Cat string `query:"catname" maxLength:"64" doc:"CAT name; the server's default CAT when omitted."`
}

type idInput struct {
	CatParam
	ID string `path:"id" maxLength:"64" doc:"Document id (from its content)."`
}

type uploadInput struct {
	CatParam
	ContentType string `header:"Content-Type"`
	RawBody     []byte
}

// TextDocument is the JSON form of an upload.
type TextDocument struct {
	Title string  `json:"title" maxLength:"300" doc:"Title; else the text's first heading."`
	Text  string  `json:"text" doc:"The document's text, read as Markdown."`
	URL   *string `json:"url,omitempty" maxLength:"2000" doc:"Where readers find the original."`
}

// DocumentSummary is a document without its chunks.
type DocumentSummary struct {
	ID        string    `json:"id" doc:"Id, from the content: the same content has the same id."`
	Title     string    `json:"title"`
	URL       *string   `json:"url,omitempty" doc:"Where readers find the original, when given."`
	Chunks    int       `json:"chunks" doc:"Number of chunks."`
	Bytes     int       `json:"bytes" doc:"Size of the content as uploaded."`
	Format    string    `json:"format" enum:"markdown,text,html"`
	Origin    string    `json:"origin" doc:"upload, or dir:<file> for a file of cat.knowledge.documents."`
	CreatedAt time.Time `json:"created_at"`
}

type uploadOutput struct {
	Status int
	Body   DocumentSummary
}

// DocumentList is a CAT's documents.
type DocumentList struct {
	Documents []DocumentSummary `json:"documents" nullable:"false"`
}

// Chunk is a passage of a document.
type Chunk struct {
	ID          string   `json:"id" doc:"Chunk id, <document id>-<index>: what sources name as chunk_id."`
	Index       int      `json:"index"`
	HeadingPath []string `json:"heading_path" nullable:"false" doc:"The titles of the sections it sits in, outermost first."`
	Text        string   `json:"text"`
	Tokens      int      `json:"tokens" doc:"Its length in cl100k_base tokens."`
	Hash        string   `json:"hash" doc:"SHA-256 of the text: the key of its embeddings."`
}

// DocumentDetail is a document with its chunks.
type DocumentDetail struct {
	DocumentSummary
	ChunkList []Chunk `json:"chunk_list" nullable:"false" doc:"The chunks in order."`
}

func summary(d knowledge.Document) DocumentSummary {
	s := DocumentSummary{ID: d.ID, Title: d.Title, Chunks: d.ChunkCount, Bytes: d.Bytes, Format: d.Format, Origin: d.Origin, CreatedAt: d.CreatedAt}
	if d.URL != "" {
		s.URL = &d.URL
	}
	return s
}

// admin checks the caller is an admin and the CAT exists.
func (a *docsAPI) admin(ctx context.Context, cat string) (string, error) {
	if a.d.Documents == nil || a.d.Cats == nil {
		return "", errs.New(errs.KindUnavailable, "documents are not configured on this server")
	}
	if err := base.RequireAdmin(ctx); err != nil {
		return "", err
	}
	if cat == "" {
		cat = a.d.DefaultCat
	}
	if cat == "" {
		return "", errs.New(errs.KindInvalid, "catname: no default CAT on this server, name one with ?catname=")
	}
	return cat, nil
}

func (a *docsAPI) fail(ctx context.Context, err error) error {
	body := base.ErrorBodyFor(ctx, a.log, err, base.ChatKinds)
	return base.NewError(body, base.FailureHeaders(err, body.Status))
}

func (a *docsAPI) upload(ctx context.Context, in *uploadInput) (*uploadOutput, error) {
	name, err := a.admin(ctx, in.Cat)
	if err != nil {
		return nil, a.fail(ctx, err)
	}
	cfg, err := a.d.Cats.Cat(ctx, name)
	if err != nil {
		return nil, a.fail(ctx, err)
	}
	up, err := readUpload(in.ContentType, in.RawBody)
	if errors.Is(err, errUnsupported) {
		return nil, base.NewError(base.ErrorBody{Code: "UNSUPPORTED_MEDIA_TYPE", Status: http.StatusUnsupportedMediaType, Message: err.Error()}, nil)
	}
	if err != nil {
		return nil, a.fail(ctx, err)
	}
	doc, created, err := a.d.Documents.Ingest(ctx, cfg, up)
	if err != nil {
		return nil, a.fail(ctx, err)
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		a.log.LogAttrs(ctx, slog.LevelInfo, "document added", slog.String("cat", name), slog.String("id", doc.ID), slog.Int("chunks", doc.ChunkCount))
	}
	return &uploadOutput{Status: status, Body: summary(doc)}, nil
}

// errUnsupported is answered 415.
var errUnsupported = errs.New(errs.KindInvalid, "body: send multipart/form-data with a file part, or JSON {title, text, url}")

// readUpload reads a multipart body's file part (and title, url fields)
// or a JSON body.
func readUpload(contentType string, body []byte) (retrieval.Upload, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return retrieval.Upload{}, unsupported()
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		var d TextDocument
		dec := json.NewDecoder(bytes.NewReader(body))
		if err := dec.Decode(&d); err != nil {
			return retrieval.Upload{}, errs.New(errs.KindInvalid, "body: not a JSON object {title, text, url}")
		}
		up := retrieval.Upload{Title: d.Title, Format: knowledge.FormatMarkdown, Content: []byte(d.Text)}
		if d.URL != nil {
			up.URL = *d.URL
		}
		if strings.TrimSpace(d.Text) == "" {
			return retrieval.Upload{}, errs.New(errs.KindInvalid, "text: must not be empty")
		}
		return up, nil
	case mt == "multipart/form-data":
		r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		var up retrieval.Upload
		found := false
		for {
			p, err := r.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return retrieval.Upload{}, errs.New(errs.KindInvalid, "body: malformed multipart/form-data")
			}
			data, err := io.ReadAll(io.LimitReader(p, retrieval.MaxDocumentBytes+1))
			if err != nil {
				return retrieval.Upload{}, errs.New(errs.KindInvalid, "body: malformed multipart/form-data")
			}
			switch p.FormName() {
			case "file":
				found = true
				up.Filename, up.Content = p.FileName(), data
				up.Format = knowledge.FormatOf(p.FileName(), p.Header.Get("Content-Type"))
				if up.Format == "" {
					return retrieval.Upload{}, errs.New(errs.KindInvalid, "file: %q is not Markdown (.md), plain text (.txt) or HTML (.html)", clip(p.FileName()))
				}
			case "title":
				up.Title = strings.TrimSpace(string(data))
			case "url":
				up.URL = strings.TrimSpace(string(data))
			}
		}
		if !found {
			return retrieval.Upload{}, errs.New(errs.KindInvalid, "file: missing (send the document as the form's file part)")
		}
		return up, nil
	}
	return retrieval.Upload{}, unsupported()
}

func unsupported() error { return errUnsupported }

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

func (a *docsAPI) list(ctx context.Context, in *CatParam) (*base.Body[DocumentList], error) {
	name, err := a.admin(ctx, in.Cat)
	if err != nil {
		return nil, a.fail(ctx, err)
	}
	if _, err := a.d.Cats.Cat(ctx, name); err != nil {
		return nil, a.fail(ctx, err)
	}
	docs, err := a.d.Documents.Documents(ctx, name)
	if err != nil {
		return nil, a.fail(ctx, err)
	}
	out := DocumentList{Documents: []DocumentSummary{}}
	for _, d := range docs {
		out.Documents = append(out.Documents, summary(d))
	}
	return &base.Body[DocumentList]{Body: out}, nil
}

func (a *docsAPI) get(ctx context.Context, in *idInput) (*base.Body[DocumentDetail], error) {
	name, err := a.admin(ctx, in.Cat)
	if err != nil {
		return nil, a.fail(ctx, err)
	}
	if _, err := a.d.Cats.Cat(ctx, name); err != nil {
		return nil, a.fail(ctx, err)
	}
	d, err := a.d.Documents.Document(ctx, name, in.ID)
	if err != nil {
		return nil, a.fail(ctx, err)
	}
	out := DocumentDetail{DocumentSummary: summary(d), ChunkList: []Chunk{}}
	for _, c := range d.Chunks {
		out.ChunkList = append(out.ChunkList, Chunk{ID: c.ID, Index: c.Index, HeadingPath: base.NonNil(c.HeadingPath), Text: c.Text, Tokens: c.Tokens, Hash: c.Hash})
	}
	return &base.Body[DocumentDetail]{Body: out}, nil
}

func (a *docsAPI) remove(ctx context.Context, in *idInput) (*struct{}, error) {
	name, err := a.admin(ctx, in.Cat)
	if err != nil {
		return nil, a.fail(ctx, err)
	}
	if _, err := a.d.Cats.Cat(ctx, name); err != nil {
		return nil, a.fail(ctx, err)
	}
	if err := a.d.Documents.Delete(ctx, name, in.ID); err != nil {
		return nil, a.fail(ctx, err)
	}
	a.log.LogAttrs(ctx, slog.LevelInfo, "document deleted", slog.String("cat", name), slog.String("id", in.ID))
	return nil, nil
}
