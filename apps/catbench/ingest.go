package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// ingestRoute is the route of the ingestion measurement, for --routes.
const ingestRoute = "/interactions (POST)"

// ingestBatch is how many interactions one ingestion request carries, and
// ingestWorkers from how many connections at once: the method of
// BenchmarkIngestHTTP (apps/catsrv/internal/httpapi/analyticsapi), so the
// two figures compare, whatever --workers the other steps use.
const (
	ingestBatch   = 1000
	ingestWorkers = 2
)

// ingestStats is what the ingestion measurement found.
type ingestStats struct {
	batches, interactions int
	elapsed               time.Duration
	perSec                float64
	counted               int64 // how much total_interactions grew
	wantCounted           int64 // the api lines sent
	retried               bool  // a second send of every batch stored nothing
}

// benchIngest posts batches of ingestBatch lines of the log (those of the
// first CAT, each given an interaction_id) to POST /interactions with an
// ingest token, from ingestWorkers connections, then sends every batch again
// and checks that total_interactions grew by the api lines sent, once.
func benchIngest(ctx context.Context, cfg config, ds dataset, base, adminTok string) (ingestStats, error) {
	var st ingestStats
	cat := benchCats[0]
	bodies, apiLines, err := ingestBodies(ds, cat, cfg.ingestBatches, time.Now())
	if err != nil {
		return st, err
	}
	tok, err := ingestToken(ctx, cfg, ds, cat)
	if err != nil {
		return st, err
	}
	admin := newClient(base, adminTok, 1)
	before, err := admin.total(ctx, cat)
	if err != nil {
		return st, err
	}
	c := newClient(base, tok, ingestWorkers)
	start := time.Now()
	if err := c.postAll(ctx, cat, bodies, "\"stored\":"); err != nil {
		return st, err
	}
	st.elapsed = time.Since(start)
	st.batches, st.wantCounted = len(bodies), apiLines
	for _, b := range bodies {
		st.interactions += bytes.Count(b, []byte{'\n'})
	}
	st.perSec = float64(st.interactions) / st.elapsed.Seconds()
	if err := c.postAll(ctx, cat, bodies, "\"stored\":0,"); err != nil {
		return st, fmt.Errorf("retry: %w", err)
	}
	st.retried = true
	after, err := admin.total(ctx, cat)
	if err != nil {
		return st, err
	}
	st.counted = after - before
	return st, nil
}

// ingestPace is the time between two ingested lines: 50,000 a second,
// the target rate.
const ingestPace = 20 * time.Microsecond

// ingestBodies cuts the first batches*ingestBatch lines of cat from the log
// into JSON Lines bodies, each line with an interaction_id and a time from
// from on, ingestPace apart, and counts their api lines. That is live
// traffic: lines that happen now, in time order, at the rate the
// benchmark aims for. (The log's own times spread a batch over a year of
// days, each a block of codes to rewrite; times later than the chats of a
// later run, say over the rest of the day, would make every later row a
// late one for the column index to insert among them.)
func ingestBodies(ds dataset, cat string, batches int, from time.Time) ([][]byte, int64, error) {
	f, err := os.Open(ds.path) //nolint:gosec // the harness's own generated log
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 2<<20)
	catField := `"cat":"` + cat + `"`
	var out [][]byte
	var cur bytes.Buffer
	var api int64
	n := 0
	for sc.Scan() && len(out) < batches {
		line := sc.Text()
		if !strings.Contains(line, catField) || !strings.HasSuffix(line, "}") {
			continue
		}
		if strings.Contains(line, `"event_kind":"api"`) {
			api++
		}
		at := from.Add(time.Duration(n) * ingestPace).UTC().Format(time.RFC3339Nano)
		line, ok := retime(line, at)
		if !ok {
			return nil, 0, fmt.Errorf("a line of %s does not start with its time", ds.path)
		}
		fmt.Fprintf(&cur, "%s,\"interaction_id\":\"catbench-%d\"}\n", line[:len(line)-1], n)
		n++
		if n%ingestBatch == 0 {
			out = append(out, bytes.Clone(cur.Bytes()))
			cur.Reset()
		}
	}
	if err := sc.Err(); err != nil {
		return nil, 0, err
	}
	if len(out) < batches {
		return nil, 0, fmt.Errorf("the log has %d full batches of %s, want %d", len(out), cat, batches)
	}
	return out, api, nil
}

// retime replaces the time of a line as catsrv demo writes it (the first
// field).
func retime(line, at string) (string, bool) {
	const head = `{"time":"`
	rest, ok := strings.CutPrefix(line, head)
	if !ok {
		return line, false
	}
	_, after, ok := strings.Cut(rest, `"`)
	return head + at + `"` + after, ok
}

// ingestToken asks `catsrv token` for an ingest token of cat.
func ingestToken(ctx context.Context, cfg config, ds dataset, cat string) (string, error) {
	cmd := exec.CommandContext(ctx, cfg.catsrv, "token", "--config", ds.configDir, "--subject", "catbench-feeder", //nolint:gosec // runs the binary the operator named
		"--role", "ingest", "--cats", cat, "--ttl", "6h")
	cmd.Env = append(os.Environ(), "CATSRV_JWT_SECRET="+benchSecret)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("catsrv token: %w", err)
	}
	f := strings.Fields(strings.TrimSpace(string(out)))
	if len(f) == 0 {
		return "", fmt.Errorf("catsrv token printed nothing")
	}
	return f[len(f)-1], nil
}

// postAll posts every body from c.workers connections; each answer must
// be 200 and contain want.
func (c *client) postAll(ctx context.Context, cat string, bodies [][]byte, want string) error {
	next := make(chan []byte)
	errs := make(chan error, c.workers)
	var wg sync.WaitGroup
	for range c.workers {
		wg.Go(func() {
			for body := range next {
				if err := c.post(ctx, cat, body, want); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var err error
feed:
	for _, b := range bodies {
		select {
		case next <- b:
		case err = <-errs:
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	return err
}

func (c *client) post(ctx context.Context, cat string, body []byte, want string) error {
	u := c.base + prefix + "/interactions?" + url.Values{"catname": {cat}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body)) //nolint:gosec // the local server under test
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/x-ndjson")
	res, err := c.http.Do(req) //nolint:gosec // the local server under test
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(want)) {
		return fmt.Errorf("POST /interactions: %d %.300s (want %s)", res.StatusCode, b, want)
	}
	return nil
}

// total is the CAT's total_interactions over its whole log.
func (c *client) total(ctx context.Context, cat string) (int64, error) {
	var out struct {
		Total int64 `json:"total_interactions"`
	}
	err := c.getJSON(ctx, "/metrics/total_interactions", url.Values{"catname": {cat}}, &out)
	return out.Total, err
}

// ingestRow is the summary row of the ingestion measurement.
func (r *report) ingestRow() string {
	if r.ingest == nil {
		return "| ingestion over HTTP, batches of 1000 | ≥ 50000 interactions/s | not measured in this run | |\n"
	}
	s := r.ingest
	perBatch := s.elapsed / time.Duration(max(s.batches, 1))
	return fmt.Sprintf("| ingestion over HTTP, batches of 1000 | ≥ 50000 interactions/s | %.0f interactions/s (%d batches, %d connections, %s, %s a batch) | %s |\n"+
		"| every ingested interaction counted once | total_interactions + api lines | +%d for %d api lines, sent twice | %s |\n",
		s.perSec, s.batches, ingestWorkers, s.elapsed.Round(time.Millisecond), perBatch.Round(100*time.Microsecond), verdict(s.perSec >= 50_000),
		s.counted, s.wantCounted, verdict(s.retried && s.counted == s.wantCounted))
}
