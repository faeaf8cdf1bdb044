package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/catsrv/catsrv/adapters/openai/embedtest"
)

// docsRoute is the route `--routes` matches to select the documents
// measurement alone.
const docsRoute = "/api/v1/cat/documents"

// docsCat is the CAT the documents measurement uploads to and asks.
const docsCat = "docs"

// Shape of the synthetic documents: sections of docsSectionWords words
// under their own heading, each one chunk (a chunk never spans two
// sections, and a section is under the default 500 tokens).
const (
	docsSections     = 10
	docsSectionWords = 70
	docsVocabulary   = 20_000
	docsWarmUp       = 20
)

// docsStats are one back end's documents measurement.
type docsStats struct {
	backend            string
	docs, chunks       int
	ingest             time.Duration
	keyword, hybrid    searchStats
	keywordRSS         int64 // VmHWM of the server that ingested and served keyword search
	hybridRSS          int64 // VmHWM of the server that built the vector index and served hybrid search
	indexBuild         time.Duration
	embedded           int64 // texts the embeddings server was asked for during the build
	dbBytes            int64
	load1Start, load1E string
}

// searchStats are the latencies of questions answered by the legacy qa
// stage from the documents (POST /chat), and how often the document a
// question was drawn from is among the sources.
type searchStats struct {
	n, found int
	p50, p99 time.Duration
}

// vocabulary is docsVocabulary made-up words (syllables), drawn with a
// Zipf law: a few very common, most rare, as in real manuals.
func vocabulary() []string {
	syl := strings.Fields("ka lo mi ne su ra to ve di pa ku se mo li na ze bo ri ta fu go he ja")
	r := rand.New(rand.NewPCG(benchSeed, 7)) //nolint:gosec // reproducible text, not a secret
	seen := map[string]bool{}
	var out []string
	for len(out) < docsVocabulary {
		n := 2 + r.IntN(3)
		var b strings.Builder
		for range n {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// docGen writes document i: a title and docsSections sections of
// Zipf-drawn words, reproducibly.
type docGen struct{ vocab []string }

func (g docGen) doc(i int) (title, text string, sections [][]string) {
	r := rand.New(rand.NewPCG(benchSeed, uint64(1000+i))) //nolint:gosec // reproducible text
	z := rand.NewZipf(r, 1.07, 2, uint64(len(g.vocab)-1))
	word := func() string { return g.vocab[z.Uint64()] }
	title = fmt.Sprintf("Manual %d: %s %s", i, word(), word())
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", title)
	for s := range docsSections {
		words := make([]string, docsSectionWords)
		for k := range words {
			words[k] = word()
		}
		sections = append(sections, words)
		fmt.Fprintf(&b, "## Section %d %s\n\n%s.\n\n", s+1, word(), strings.Join(words, " "))
	}
	return title, b.String(), sections
}

// question draws a question from one section of document i: three of its
// rarer words, as a user remembering a passage would ask.
func (g docGen) question(r *rand.Rand, docs int) (doc int, q string) {
	doc = r.IntN(docs)
	_, _, sections := g.doc(doc)
	words := slices.Clone(sections[r.IntN(len(sections))])
	rank := map[string]int{}
	for i, w := range g.vocab {
		rank[w] = i
	}
	slices.SortFunc(words, func(a, b string) int { return rank[b] - rank[a] })
	words = slices.Compact(words)
	pick := words[:min(len(words), 6)]
	r.Shuffle(len(pick), func(a, b int) { pick[a], pick[b] = pick[b], pick[a] })
	return doc, "Where does the manual explain " + strings.Join(pick[:3], " ") + "?"
}

// benchDocuments uploads cfg.documents synthetic documents over HTTP to a
// fresh database of the back end, asks questions by keyword search, then
// restarts the server with embeddings (the tests' deterministic server)
// and asks them again by hybrid search once the vector index is built.
func benchDocuments(ctx context.Context, cfg config, backend string) (*docsStats, error) {
	st := &docsStats{backend: backend, docs: cfg.documents, load1Start: loadAvg()}
	dcfg := cfg
	dcfg.scaleName = fmt.Sprintf("docs%d", cfg.documents)
	dcfg.skipImport = false
	dsn, size, cleanup, err := freshDatabase(ctx, dcfg, backend)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	embed := embedtest.Start()
	defer embed.Close()
	dir := filepath.Join(cfg.workDir, "docs-configs")
	if err := writeDocsCat(dir, ""); err != nil {
		return nil, err
	}
	ds := dataset{configDir: dir}
	srv, err := startServer(ctx, dcfg, ds, dsn, "serve-docs.log")
	if err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			srv.stop()
		}
	}()
	token, err := adminToken(ctx, dcfg, ds)
	if err != nil {
		return nil, err
	}
	users, err := userTokens(ctx, dcfg, ds, 1)
	if err != nil {
		return nil, err
	}
	c := newClient(srv.base, token, max(cfg.workers, 4))
	gen := docGen{vocab: vocabulary()}
	start := time.Now()
	chunks, err := c.uploadDocuments(ctx, gen, cfg.documents)
	if err != nil {
		return nil, err
	}
	st.ingest, st.chunks = time.Since(start), chunks
	fmt.Printf("  %-28s %s: %d documents, %d chunks in %s: %.0f docs/s, %.0f chunks/s\n", docsRoute, backend,
		cfg.documents, chunks, st.ingest.Round(time.Millisecond), float64(cfg.documents)/st.ingest.Seconds(), float64(chunks)/st.ingest.Seconds())
	if st.keyword, err = c.askDocuments(ctx, gen, users[0], cfg.documents, cfg.docQuestions); err != nil {
		return nil, fmt.Errorf("keyword questions: %w", err)
	}
	st.keywordRSS = srv.rss()
	fmt.Printf("  %-28s %s keyword: %s\n", chatRoute, backend, st.keyword.short())
	srv.stop()
	stopped = true
	if st.dbBytes, err = size(ctx); err != nil {
		return nil, err
	}

	if err := writeDocsCat(dir, embed.BaseURL()); err != nil {
		return nil, err
	}
	const hybridLog = "serve-docs-hybrid.log"
	srv, err = startServer(ctx, dcfg, ds, dsn, hybridLog)
	if err != nil {
		return nil, err
	}
	stopped = false
	c = newClient(srv.base, token, max(cfg.workers, 4))
	start = time.Now()
	before := embed.Inputs.Load()
	if err := c.waitVectors(ctx, users[0], filepath.Join(cfg.workDir, hybridLog)); err != nil {
		return nil, err
	}
	st.indexBuild, st.embedded = time.Since(start), embed.Inputs.Load()-before
	fmt.Printf("  vector index: %d texts embedded in %s\n", st.embedded, st.indexBuild.Round(time.Millisecond))
	if st.hybrid, err = c.askDocuments(ctx, gen, users[0], cfg.documents, cfg.docQuestions); err != nil {
		return nil, fmt.Errorf("hybrid questions: %w", err)
	}
	st.hybridRSS = srv.rss()
	st.load1E = loadAvg()
	fmt.Printf("  %-28s %s hybrid: %s\n", chatRoute, backend, st.hybrid.short())
	return st, nil
}

func (s searchStats) short() string {
	return fmt.Sprintf("p50 %8s  p99 %8s  (%d questions, source document cited in %d)", ms(s.p50), ms(s.p99), s.n, s.found)
}

// writeDocsCat writes the documents CAT's configuration: legacy mode
// answering from documents only, with embeddings when baseURL is set.
func writeDocsCat(dir, baseURL string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	yaml := "cat:\n  chat_mode: legacy\n  legacy:\n    models: [qa, default]\n    default_answer: not found\n  knowledge:\n    top_k: 4\n    min_score: 0.3\n"
	if baseURL != "" {
		yaml += "    embeddings:\n      base_url: " + baseURL + "\n      model: bench-embed\n"
	}
	yaml += "security:\n  analytics:\n    public: false\n"
	return os.WriteFile(filepath.Join(dir, docsCat+".yaml"), []byte(yaml), 0o600)
}

// uploadDocuments posts documents 0..n-1 as JSON from c.workers
// connections and returns the chunks the server made of them.
func (c *client) uploadDocuments(ctx context.Context, gen docGen, n int) (int, error) {
	var next atomic.Int64
	var chunks atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, c.workers)
	for range c.workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				title, text, _ := gen.doc(i)
				k, err := c.uploadDocument(ctx, title, text)
				if err != nil {
					errc <- fmt.Errorf("document %d: %w", i, err)
					next.Store(int64(n))
					return
				}
				chunks.Add(int64(k))
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errc:
		return 0, err
	default:
	}
	return int(chunks.Load()), ctx.Err()
}

func (c *client) uploadDocument(ctx context.Context, title, text string) (int, error) {
	body, err := json.Marshal(map[string]string{"title": title, "text": text})
	if err != nil {
		return 0, err
	}
	u := c.base + docsRoute + "?" + url.Values{"catname": {docsCat}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body)) //nolint:gosec // the local server under test
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req) //nolint:gosec // the local server under test
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, err
	}
	if res.StatusCode != http.StatusCreated {
		return 0, fmt.Errorf("POST %s: %d %.300s", docsRoute, res.StatusCode, b)
	}
	var out struct {
		Chunks int `json:"chunks"`
	}
	return out.Chunks, json.Unmarshal(b, &out)
}

// docsReply is the part of a chat reply the documents measurement reads.
type docsReply struct {
	Model   string `json:"model"`
	Sources []struct {
		Kind  string `json:"kind"`
		Title string `json:"title"`
	} `json:"sources"`
}

// askDocuments asks n questions (after docsWarmUp unmeasured ones) one
// at a time and returns their latencies and how often the document a
// question came from is cited.
func (c *client) askDocuments(ctx context.Context, gen docGen, token string, docs, n int) (searchStats, error) {
	r := rand.New(rand.NewPCG(benchSeed, 99)) //nolint:gosec // reproducible questions
	var st searchStats
	var lat []time.Duration
	for i := range docsWarmUp + n {
		doc, q := gen.question(r, docs)
		reply, d, err := c.askDocument(ctx, token, q)
		if err != nil {
			return st, err
		}
		if i < docsWarmUp {
			continue
		}
		lat = append(lat, d)
		prefix := fmt.Sprintf("Manual %d:", doc)
		if slices.ContainsFunc(reply.Sources, func(s struct {
			Kind  string `json:"kind"`
			Title string `json:"title"`
		}) bool {
			return s.Kind == "document" && strings.HasPrefix(s.Title, prefix)
		}) {
			st.found++
		}
	}
	slices.Sort(lat)
	st.n, st.p50, st.p99 = len(lat), percentile(lat, 50), percentile(lat, 99)
	return st, nil
}

func (c *client) askDocument(ctx context.Context, token, q string) (docsReply, time.Duration, error) {
	var reply docsReply
	b, d, err := c.postChat(ctx, token, docsCat, q, "")
	if err != nil {
		return reply, 0, err
	}
	return reply, d, json.Unmarshal(b, &reply)
}

// vectorsReady is what the server logs when a CAT's vector index is
// published (core/knowledge/retrieval).
const vectorsReady = "vector index ready"

// waitVectors asks one question, which starts the vector index build,
// and waits for the server to log that the index is ready (at most
// 30 minutes).
func (c *client) waitVectors(ctx context.Context, token, logPath string) error {
	if _, _, err := c.askDocument(ctx, token, "Where is the manual?"); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Minute)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(logPath) //nolint:gosec // the harness's own log
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(vectorsReady)) {
			return nil
		}
		if bytes.Contains(b, []byte("building the vector index failed")) {
			return fmt.Errorf("vector index build failed (see %s)", logPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return errors.New("vector index not ready after 30 minutes")
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// docsMarkdown is the documents section of docs/benchmarks.md: one row
// per back end (the method and the machine are in docs/knowledge.md).
func docsMarkdown(all []*docsStats) string {
	if len(all) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| %d documents, %d chunks (another VM, [how](knowledge.md#scale)) | ingestion over HTTP | keyword p50 / p99 | vector build | hybrid p50 / p99 | RSS keyword / hybrid | load avg |\n",
		all[0].docs, all[0].chunks)
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, s := range all {
		fmt.Fprintf(&b, "| %s | %.0f docs/s, %.0f chunks/s | %s / %s | %s | %s / %s | %.0f / %.0f MiB | %s → %s |\n",
			backendTitle(s.backend), float64(s.docs)/s.ingest.Seconds(), float64(s.chunks)/s.ingest.Seconds(),
			ms(s.keyword.p50), ms(s.keyword.p99), s.indexBuild.Round(time.Second),
			ms(s.hybrid.p50), ms(s.hybrid.p99), mib(s.keywordRSS), mib(s.hybridRSS), s.load1Start, s.load1E)
	}
	return b.String()
}
