package base

import (
	"compress/gzip"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// MinCompressSize is the smallest JSON body Compress gzips: below it the
// gzip header and the work cost more than they save.
const MinCompressSize = 1024

// gzipLevel is the compression level of JSON responses: the fastest.
// Responses are compressed once per request, not once per build as the
// dashboard's assets are, so the server's CPU matters more than the last
// bytes: level 1 takes about a third of level 6's time for some 15% more
// bytes.
const gzipLevel = gzip.BestSpeed

// gzipPool recycles the compressors: each holds about 1.2 MB of state,
// allocated on its first write.
var gzipPool = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(io.Discard, gzipLevel)
	return w
}}

// Compress gzips JSON responses (application/json and application/*+json)
// of at least MinCompressSize bytes for clients that accept gzip, and adds
// Vary: Accept-Encoding to every JSON response so caches keep both forms.
// Anything else passes untouched: event streams (the chat stream keeps
// flushing event by event; a flush before the decision also turns
// compression off), CSV and NDJSON exports, the dashboard's assets (they
// are precompressed at build and served with their own Content-Encoding),
// and any response that already has a Content-Encoding.
func Compress(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		cw := &compressWriter{ResponseWriter: w, accepts: AcceptsGzip(r.Header.Get("Accept-Encoding"))}
		// Not deferred: after a panic nothing held back goes out, and the
		// recovering middleware answers 500 on a clean writer.
		next.ServeHTTP(cw, r)
		cw.finish()
	})
}

// AcceptsGzip reports whether an Accept-Encoding header allows gzip: a
// gzip (or x-gzip, or *) coding whose q is not 0.
func AcceptsGzip(header string) bool {
	star := false
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		switch coding {
		case "gzip", "x-gzip":
			return q > 0
		case "*":
			star = q > 0
		}
	}
	return star
}

// compressWriter holds back the start of a body until it knows whether to
// compress it: MinCompressSize bytes, a flush or the end of the handler.
type compressWriter struct {
	http.ResponseWriter
	accepts  bool
	status   int
	buf      []byte
	decided  bool
	gz       *gzip.Writer
	finished bool
}

func (c *compressWriter) WriteHeader(code int) {
	if c.decided || c.status != 0 {
		if c.decided && c.gz == nil {
			c.ResponseWriter.WriteHeader(code)
		}
		return
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		// 1xx informational responses go straight through.
		c.ResponseWriter.WriteHeader(code)
		return
	}
	c.status = code
}

func (c *compressWriter) Write(b []byte) (int, error) {
	if c.decided {
		if c.gz != nil {
			return c.gz.Write(b)
		}
		return c.ResponseWriter.Write(b)
	}
	c.buf = append(c.buf, b...)
	if len(c.buf) >= MinCompressSize {
		if err := c.decide(true); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// Flush sends what is held back uncompressed (a handler that flushes
// streams, and a stream must not wait for a compressor's block) or, once
// compressing, flushes the compressor.
func (c *compressWriter) Flush() {
	if !c.decided {
		_ = c.decide(false)
	}
	if c.gz != nil {
		_ = c.gz.Flush()
	}
	_ = http.NewResponseController(c.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (c *compressWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// decide writes the status and what is held back, compressed when allowed
// and big enough.
func (c *compressWriter) decide(allow bool) error {
	c.decided = true
	h := c.Header()
	status := c.status
	if status == 0 {
		status = http.StatusOK
	}
	json := isJSON(h.Get("Content-Type"))
	if json {
		h.Add("Vary", "Accept-Encoding")
	}
	if allow && json && c.accepts && len(c.buf) >= MinCompressSize && h.Get("Content-Encoding") == "" &&
		status != http.StatusNoContent && status != http.StatusNotModified && status >= 200 {
		h.Set("Content-Encoding", "gzip")
		h.Del("Content-Length")
		c.ResponseWriter.WriteHeader(status)
		gz, _ := gzipPool.Get().(*gzip.Writer)
		gz.Reset(c.ResponseWriter)
		c.gz = gz
		_, err := gz.Write(c.buf)
		c.buf = nil
		return err
	}
	c.ResponseWriter.WriteHeader(status)
	var err error
	if len(c.buf) > 0 {
		_, err = c.ResponseWriter.Write(c.buf)
	}
	c.buf = nil
	return err
}

// finish ends the response: what was held back goes out (compressed when
// it is all the body and big enough) and the compressor is closed.
func (c *compressWriter) finish() {
	if c.finished {
		return
	}
	c.finished = true
	if !c.decided {
		if c.status == 0 && len(c.buf) == 0 {
			// The handler wrote nothing at all: let the server answer 200.
			return
		}
		_ = c.decide(true)
	}
	if c.gz != nil {
		_ = c.gz.Close()
		c.gz.Reset(io.Discard)
		gzipPool.Put(c.gz)
		c.gz = nil
	}
}

// isJSON reports whether a Content-Type is JSON: application/json or a
// +json type such as application/problem+json.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}
