package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"

	"github.com/catsrv/catsrv/apps/catsrv/internal/buildinfo"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/authapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/openaiapi"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
)

// committedDoc is the document the public client (package client) was
// generated from; TestClientIsCurrent in apps/catsrv checks the client
// against it.
const committedDoc = "../../../../client/openapi.json"

const regenerate = "run: go generate ./client"

// compact removes insignificant whitespace, so that the indented committed
// document compares with the served one byte for byte otherwise.
func compact(t *testing.T, doc []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	return b.String()
}

func TestOpenAPIDocumentIsServedAndCommitted(t *testing.T) {
	e := NewEnv(t)
	served := e.Get(t, "/openapi.json", "")
	if served.Status != 200 {
		t.Fatalf("status %d", served.Status)
	}
	offline, err := httpapi.OpenAPIDocument()
	if err != nil {
		t.Fatal(err)
	}
	if compact(t, served.Body) != compact(t, offline) {
		t.Error("OpenAPIDocument differs from the served /openapi.json")
	}
	committed, err := os.ReadFile(committedDoc)
	if err != nil {
		t.Fatal(err)
	}
	if compact(t, served.Body) != compact(t, committed) {
		t.Errorf("%s is stale; %s", committedDoc, regenerate)
	}
}

// TestOpenAPIConcurrentFirstRequests guards against huma's lazily rendered
// documents racing (run with -race).
func TestOpenAPIConcurrentFirstRequests(t *testing.T) {
	_, h := httpapi.New(httpapi.Deps{Logger: slog.New(slog.DiscardHandler)})
	var wg sync.WaitGroup
	for _, path := range []string{"/openapi.json", "/openapi.json", "/openapi-3.0.json", "/openapi-3.0.json", "/openapi.yaml", "/openapi.yaml"} {
		wg.Go(func() {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != 200 || rec.Body.Len() == 0 {
				t.Errorf("%s: status %d, %d bytes", path, rec.Code, rec.Body.Len())
			}
		})
	}
	wg.Wait()
}

// document is the part of an OpenAPI document the tests look at.
type document struct {
	OpenAPI string `json:"openapi"`
	Info    struct {
		Title, Version, Description string
	} `json:"info"`
	Components struct {
		SecuritySchemes map[string]struct {
			Type, Scheme, BearerFormat string
		} `json:"securitySchemes"`
	} `json:"components"`
	Paths map[string]map[string]struct {
		OperationID string                     `json:"operationId"`
		Summary     string                     `json:"summary"`
		Tags        []string                   `json:"tags"`
		Security    []map[string][]string      `json:"security"`
		Parameters  []parameter                `json:"parameters"`
		Responses   map[string]json.RawMessage `json:"responses"`
	} `json:"paths"`
}

type parameter struct {
	Name     string `json:"name"`
	In       string `json:"in"`
	Required bool   `json:"required"`
}

func TestOpenAPIDocumentContent(t *testing.T) {
	raw, err := httpapi.OpenAPIDocument()
	if err != nil {
		t.Fatal(err)
	}
	var doc document
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Info.Title != "catsrv" || doc.Info.Version != buildinfo.Get().Version || doc.Info.Description == "" {
		t.Errorf("header: %s %+v", doc.OpenAPI, doc.Info)
	}
	if s := doc.Components.SecuritySchemes["bearer"]; s.Type != "http" || s.Scheme != "bearer" || s.BearerFormat != "JWT" {
		t.Errorf("bearer scheme: %+v", s)
	}
	ids := map[string]bool{}
	for path, methods := range doc.Paths {
		for method, op := range methods {
			t.Run(method+" "+path, func(t *testing.T) {
				ingest := method == "post" && path == AnalyticsPrefix+"/interactions" // the one analytics route that writes
				if method != "get" && !ingest && !strings.HasPrefix(path, chatapi.Prefix) && !strings.HasPrefix(path, authapi.Prefix) && !strings.HasPrefix(path, openaiapi.Prefix) {
					t.Errorf("method %s", method)
				}
				if op.OperationID == "" || ids[op.OperationID] || op.Summary == "" || len(op.Tags) == 0 {
					t.Errorf("operation id %q (duplicate: %v), summary %q, tags %v", op.OperationID, ids[op.OperationID], op.Summary, op.Tags)
				}
				ids[op.OperationID] = true
				if !strings.HasPrefix(path, AnalyticsPrefix) {
					return
				}
				if !slices.ContainsFunc(op.Security, func(s map[string][]string) bool { _, ok := s["bearer"]; return ok }) {
					t.Errorf("security %v does not list bearer", op.Security)
				}
				route := strings.TrimPrefix(path, AnalyticsPrefix)
				if route == "/get_cats" {
					return
				}
				i := slices.IndexFunc(op.Parameters, func(p parameter) bool { return p.Name == "catname" })
				if i < 0 || !op.Parameters[i].Required || op.Parameters[i].In != "query" {
					t.Errorf("catname is not a required query parameter: %+v", op.Parameters)
				}
				for _, status := range []string{"200", "401", "403", "422", "500"} {
					if _, ok := op.Responses[status]; !ok {
						t.Errorf("no %s response", status)
					}
				}
			})
		}
	}
	for _, route := range append(slices.Clone(AnalyticsRoutes), "/get_cats") {
		if _, ok := doc.Paths[AnalyticsPrefix+route]; !ok {
			t.Errorf("%s is not documented", route)
		}
	}
}

func TestOpenAPI30IsValid(t *testing.T) {
	e := NewEnv(t)
	res := e.Get(t, "/openapi-3.0.json", "")
	if res.Status != 200 {
		t.Fatalf("status %d", res.Status)
	}
	doc, err := openapi3.NewLoader().LoadFromData(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0") {
		t.Errorf("version %s", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Errorf("invalid OpenAPI 3.0 document: %v", err)
	}
}

func TestDocsPage(t *testing.T) {
	e := NewEnv(t)
	res := e.Get(t, "/docs", "")
	if res.Status != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") || !bytes.Contains(res.Body, []byte("/openapi")) {
		t.Errorf("status %d, type %q: %.200s", res.Status, res.Header.Get("Content-Type"), res.Body)
	}
}

// TestDocsPageIsServedFromTheBinary: /docs names no other host: its
// script and stylesheet are the embedded Elements assets under
// /docs/assets/, gzip-compressed to clients that accept it and plain to
// the others, and its CSP allows this server alone.
func TestDocsPageIsServedFromTheBinary(t *testing.T) {
	e := NewEnv(t)
	res := e.Get(t, "/docs", "")
	page := string(res.Body)
	if strings.Contains(page, "unpkg") || strings.Contains(page, "https://") || strings.Contains(res.Header.Get("Content-Security-Policy"), "https:") {
		t.Errorf("/docs names another host:\n%s\nCSP %s", page, res.Header.Get("Content-Security-Policy"))
	}
	assets := regexp.MustCompile(`(?:src|href)="(/docs/assets/elements-[0-9.]+\.(?:js|css))"`).FindAllStringSubmatch(page, -1)
	if len(assets) != 2 {
		t.Fatalf("/docs links %d embedded assets, want the script and the stylesheet:\n%s", len(assets), page)
	}
	for _, a := range assets {
		plain := e.Get(t, a[1], "")
		if plain.Status != 200 || plain.Header.Get("Content-Encoding") != "" || len(plain.Body) < 100000 {
			t.Errorf("%s without gzip: %d, encoding %q, %d bytes", a[1], plain.Status, plain.Header.Get("Content-Encoding"), len(plain.Body))
		}
		req := httptest.NewRequest(http.MethodGet, a[1], nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		e.Handler.ServeHTTP(rec, req)
		zr, err := gzip.NewReader(rec.Body)
		if err != nil || rec.Code != 200 || rec.Header().Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s with gzip: %d, encoding %q, %v", a[1], rec.Code, rec.Header().Get("Content-Encoding"), err)
		}
		unzipped, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(unzipped, plain.Body) {
			t.Errorf("%s: the gzip copy differs from the plain one (%v)", a[1], err)
		}
		if !strings.Contains(rec.Header().Get("Cache-Control"), "immutable") {
			t.Errorf("%s: Cache-Control %q", a[1], rec.Header().Get("Cache-Control"))
		}
	}
	if res := e.Get(t, "/docs/assets/other.js", ""); res.Status != 404 {
		t.Errorf("/docs/assets/other.js: %d", res.Status)
	}
}
