package docsapi_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/chatapi"
	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/docsapi"
	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"
)

const manual = `# Widget manual

## Resetting

To reset the widget, hold the power button for ten seconds until the light blinks twice.

## Cleaning

Wipe the case with a dry cloth; never use solvents.
`

// form is a multipart body with a file part and extra fields.
func form(t *testing.T, filename, content string, fields ...string) (string, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for i := 0; i+1 < len(fields); i += 2 {
		if err := w.WriteField(fields[i], fields[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if filename != "" {
		fw, err := w.CreateFormFile("file", filename)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write([]byte(content))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String(), w.FormDataContentType()
}

func upload(t *testing.T, e *ChatEnv, auth, cat, filename, content string, fields ...string) Resp {
	t.Helper()
	body, ct := form(t, filename, content, fields...)
	return e.Call(t, http.MethodPost, docsapi.Prefix+"?catname="+cat, auth, body, "Content-Type: "+ct)
}

func ask(t *testing.T, e *ChatEnv, auth, question string) chatapi.ChatResponse {
	t.Helper()
	r := e.Call(t, http.MethodPost, chatapi.Prefix+"/chat?catname="+LegacyCat, auth, map[string]any{"message": question})
	if r.Status != http.StatusOK {
		t.Fatalf("chat: %d %s", r.Status, r.Body)
	}
	var c chatapi.ChatResponse
	r.Decode(t, &c)
	return c
}

// Upload, ask, get cited, delete, and no longer be cited.
func TestUploadAskCiteDelete(t *testing.T) {
	e := NewChatEnv(t)
	admin, alice := e.Token(t, "root", "admin"), e.Token(t, "alice", "user")

	r := upload(t, e, admin, LegacyCat, "manual.md", manual, "url", "https://example.com/manual")
	if r.Status != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var doc docsapi.DocumentSummary
	r.Decode(t, &doc)
	if doc.ID == "" || doc.Title != "Widget manual" || doc.Chunks != 2 || doc.Bytes != len(manual) || doc.URL == nil || *doc.URL != "https://example.com/manual" {
		t.Errorf("document %+v", doc)
	}
	// The same content again: the same id, 200, nothing embedded.
	e.Retrieval.Close() // the first upload's index build is done
	embedded := e.Embeddings.Inputs.Load()
	again := upload(t, e, admin, LegacyCat, "copy.md", manual)
	var same docsapi.DocumentSummary
	again.Decode(t, &same)
	if again.Status != http.StatusOK || same.ID != doc.ID || e.Embeddings.Inputs.Load() != embedded {
		t.Errorf("again: %d %+v, %d texts embedded", again.Status, same, e.Embeddings.Inputs.Load()-embedded)
	}

	var detail docsapi.DocumentDetail
	r = e.Call(t, http.MethodGet, docsapi.Prefix+"/"+doc.ID+"?catname="+LegacyCat, admin, nil)
	r.Decode(t, &detail)
	if r.Status != http.StatusOK || len(detail.ChunkList) != 2 || !slices.Equal(detail.ChunkList[0].HeadingPath, []string{"Widget manual", "Resetting"}) {
		t.Fatalf("detail: %d %s", r.Status, r.Body)
	}

	c := ask(t, e, alice, "which button resets the widget?")
	if c.Model != "qa" || !strings.HasSuffix(c.Message, " [1]") || !strings.Contains(c.Message, "hold the power button") {
		t.Errorf("answer %q by %s", c.Message, c.Model)
	}
	if len(c.Sources) == 0 {
		t.Fatalf("no sources")
	}
	s := c.Sources[0]
	if s.Kind != "document" || s.ID != doc.ID || s.ChunkID != detail.ChunkList[0].ID || s.Title != "Widget manual" ||
		s.URL == nil || *s.URL != "https://example.com/manual" || s.Score <= 0 || s.Score > 1 || !strings.Contains(s.Snippet, "power button") {
		t.Errorf("source %+v", s)
	}
	// A knowledge-base entry that fits still answers, as kb.
	if kb := ask(t, e, alice, "How do I reset my password?"); len(kb.Sources) == 0 || kb.Sources[0].Kind != "kb" || kb.Sources[0].Question == nil {
		t.Errorf("kb answer %+v", kb)
	}

	if r := e.Call(t, http.MethodDelete, docsapi.Prefix+"/"+doc.ID+"?catname="+LegacyCat, admin, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	after := ask(t, e, alice, "which button resets the widget?")
	for _, s := range after.Sources {
		if s.ID == doc.ID {
			t.Errorf("deleted document still cited: %+v", after)
		}
	}
	if after.Model != "default" {
		t.Errorf("after delete answered by %s: %q", after.Model, after.Message)
	}
	if r := e.Call(t, http.MethodGet, docsapi.Prefix+"/"+doc.ID+"?catname="+LegacyCat, admin, nil); r.Status != http.StatusNotFound {
		t.Errorf("get after delete: %d", r.Status)
	}
}

func TestJSONUploadAndList(t *testing.T) {
	e := NewChatEnv(t)
	admin := e.Token(t, "root", "admin")
	r := e.Call(t, http.MethodPost, docsapi.Prefix+"?catname="+LegacyCat, admin, map[string]any{"title": "Shipping", "text": "Parcels leave the warehouse within two days."})
	if r.Status != http.StatusCreated {
		t.Fatalf("json upload: %d %s", r.Status, r.Body)
	}
	upload(t, e, admin, LegacyCat, "page.html", "<html><head><title>Returns</title></head><body><p>Returns are free for thirty days.</p></body></html>")
	var list docsapi.DocumentList
	r = e.Call(t, http.MethodGet, docsapi.Prefix+"?catname="+LegacyCat, admin, nil)
	r.Decode(t, &list)
	var titles []string
	for _, d := range list.Documents {
		titles = append(titles, d.Title+"|"+d.Format+"|"+d.Origin)
	}
	if !slices.Equal(titles, []string{"Shipping|markdown|upload", "Returns|html|upload"}) {
		t.Errorf("list %v", titles)
	}
	if r := e.Call(t, http.MethodGet, docsapi.Prefix+"?catname="+AgentCat, admin, nil); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"documents":[]`) {
		t.Errorf("other CAT: %d %s", r.Status, r.Body)
	}
}

func TestUploadRefusals(t *testing.T) {
	e := NewChatEnv(t)
	admin, alice := e.Token(t, "root", "admin"), e.Token(t, "alice", "user")
	for _, c := range []struct {
		name   string
		resp   func() Resp
		status int
	}{
		{"no token", func() Resp { return upload(t, e, "", LegacyCat, "a.md", "x") }, http.StatusUnauthorized},
		{"not admin", func() Resp { return upload(t, e, alice, LegacyCat, "a.md", "x") }, http.StatusForbidden},
		{"unknown CAT", func() Resp { return upload(t, e, admin, "nope", "a.md", "x") }, http.StatusNotFound},
		{"no file part", func() Resp { return upload(t, e, admin, LegacyCat, "", "", "title", "t") }, http.StatusUnprocessableEntity},
		{"pdf", func() Resp { return upload(t, e, admin, LegacyCat, "a.pdf", "%PDF-1.4") }, http.StatusUnprocessableEntity},
		{"not UTF-8", func() Resp { return upload(t, e, admin, LegacyCat, "a.txt", "\xff\xfe") }, http.StatusUnprocessableEntity},
		{"empty", func() Resp { return upload(t, e, admin, LegacyCat, "a.md", " \n") }, http.StatusUnprocessableEntity},
		{"plain body", func() Resp {
			return e.Call(t, http.MethodPost, docsapi.Prefix+"?catname="+LegacyCat, admin, "text", "Content-Type: text/plain")
		}, http.StatusUnsupportedMediaType},
		{"delete unknown", func() Resp {
			return e.Call(t, http.MethodDelete, docsapi.Prefix+"/nope?catname="+LegacyCat, admin, nil)
		}, http.StatusNotFound},
		{"list not admin", func() Resp { return e.Call(t, http.MethodGet, docsapi.Prefix+"?catname="+LegacyCat, alice, nil) }, http.StatusForbidden},
	} {
		if r := c.resp(); r.Status != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, r.Status, r.Body, c.status)
		}
	}
}
