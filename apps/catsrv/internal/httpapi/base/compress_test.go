package base_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
)

// got is a response with its raw (not decompressed) body.
type got struct {
	StatusCode    int
	Header        http.Header
	ContentLength int64
}

// get requests url from srv with the given Accept-Encoding and returns
// the response with its raw (not decompressed) body.
func get(t *testing.T, srv *httptest.Server, path, acceptEncoding string) (got, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Set explicitly, so the client does not decompress on its own.
	req.Header.Set("Accept-Encoding", acceptEncoding)
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return got{StatusCode: res.StatusCode, Header: res.Header, ContentLength: res.ContentLength}, body
}

func jsonOf(n int) []byte {
	return []byte(`{"items":["` + strings.Repeat("abcdefgh", n/8) + `"]}`)
}

// TestCompressGzipsLargeJSON: a JSON body of MinCompressSize or more is
// gzipped for a client that accepts it and decodes to the same bytes;
// small bodies, other types and clients that refuse gzip get it as is;
// every JSON response varies on Accept-Encoding.
func TestCompressGzipsLargeJSON(t *testing.T) {
	big, small := jsonOf(4*base.MinCompressSize), jsonOf(base.MinCompressSize/4)
	mux := http.NewServeMux()
	serve := func(path, ctype string, body []byte, chunks int) {
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ctype)
			step := len(body)/chunks + 1
			for i := 0; i < len(body); i += step {
				_, _ = w.Write(body[i:min(i+step, len(body))])
			}
		})
	}
	serve("/big", "application/json", big, 1)
	serve("/big-chunks", "application/json; charset=utf-8", big, 37)
	serve("/problem", "application/problem+json", big, 3)
	serve("/small", "application/json", small, 1)
	serve("/csv", "text/csv", big, 1)
	srv := httptest.NewServer(base.Compress(mux))
	defer srv.Close()

	for _, c := range []struct {
		path, accept string
		gzipped      bool
		want         []byte
		vary         bool
	}{
		{"/big", "gzip", true, big, true},
		{"/big", "br, gzip;q=0.5", true, big, true},
		{"/big", "*", true, big, true},
		{"/big-chunks", "deflate, gzip", true, big, true},
		{"/problem", "gzip", true, big, true},
		{"/big", "", false, big, true},
		{"/big", "gzip;q=0", false, big, true},
		{"/big", "identity", false, big, true},
		{"/small", "gzip", false, small, true},
		{"/csv", "gzip", false, big, false},
	} {
		t.Run(c.path+"/"+c.accept, func(t *testing.T) {
			res, body := get(t, srv, c.path, c.accept)
			if gz := res.Header.Get("Content-Encoding") == "gzip"; gz != c.gzipped {
				t.Fatalf("Content-Encoding %q, want gzip %v", res.Header.Get("Content-Encoding"), c.gzipped)
			}
			if c.gzipped {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
				if res.ContentLength >= int64(len(c.want)) {
					t.Errorf("compressed length %d not below %d", res.ContentLength, len(c.want))
				}
			}
			if !bytes.Equal(body, c.want) {
				t.Errorf("body differs: %d bytes, want %d", len(body), len(c.want))
			}
			if vary := strings.Contains(res.Header.Get("Vary"), "Accept-Encoding"); vary != c.vary {
				t.Errorf("Vary %q, want Accept-Encoding %v", res.Header.Get("Vary"), c.vary)
			}
		})
	}
}

// TestCompressKeepsStreamsStreaming: an event stream is never compressed
// and its events arrive while the handler is still running: the handler
// waits for the client to have read the first event before it sends the
// second, so a buffered stream would never finish.
func TestCompressKeepsStreamsStreaming(t *testing.T) {
	read := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: "+strings.Repeat("x", 2*base.MinCompressSize)+"\n\n")
		_ = http.NewResponseController(w).Flush()
		select {
		case <-read:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "data: done\n\n")
	})
	srv := httptest.NewServer(base.Compress(h))
	defer srv.Close()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	if ce := res.Header.Get("Content-Encoding"); ce != "" {
		t.Fatalf("event stream has Content-Encoding %q", ce)
	}
	br := bufio.NewReader(res.Body)
	first, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(first, "data: xxx") {
		t.Fatalf("first event %q, %v", first, err)
	}
	close(read)
	rest, err := io.ReadAll(br)
	if err != nil || !strings.Contains(string(rest), "data: done") {
		t.Fatalf("rest %q, %v", rest, err)
	}
}

// TestCompressLeavesEncodedAndEmptyResponses: a body that already has a
// Content-Encoding, a 304 and a HEAD pass untouched.
func TestCompressLeavesEncodedAndEmptyResponses(t *testing.T) {
	big := jsonOf(4 * base.MinCompressSize)
	mux := http.NewServeMux()
	mux.HandleFunc("/encoded", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "br")
		_, _ = w.Write(big)
	})
	mux.HandleFunc("/304", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotModified)
	})
	srv := httptest.NewServer(base.Compress(mux))
	defer srv.Close()
	res, body := get(t, srv, "/encoded", "gzip, br")
	if res.Header.Get("Content-Encoding") != "br" || !bytes.Equal(body, big) {
		t.Errorf("encoded body changed: %q, %d bytes", res.Header.Get("Content-Encoding"), len(body))
	}
	res, body = get(t, srv, "/304", "gzip")
	if res.StatusCode != http.StatusNotModified || res.Header.Get("Content-Encoding") != "" || len(body) != 0 {
		t.Errorf("304: status %d, encoding %q, %d bytes", res.StatusCode, res.Header.Get("Content-Encoding"), len(body))
	}
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{
		"": false, "gzip": true, "GZIP": true, "x-gzip": true, "gzip;q=0": false, "gzip; q=0.0": false,
		"deflate, br": false, "*": true, "*;q=0": false, "br;q=1, gzip;q=0.1": true, "*, gzip;q=0": false,
	} {
		if got := base.AcceptsGzip(h); got != want {
			t.Errorf("AcceptsGzip(%q) = %v, want %v", h, got, want)
		}
	}
}
