package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

const prefix = "/api/v1/analytics"

// route is one analytics route and how it is driven.
type route struct {
	path    string
	raw     bool   // computed from the raw rows: fewer requests
	filters bool   // takes the filter parameters
	limits  []int  // limit values to run; 0 is no limit
	groupBy string // the group_by of /usage and /feedback
}

// dashboardLimit is the limit dashboards send.
const dashboardLimit = 100

var routes = []route{
	{path: "/all_warehouse", filters: true, limits: []int{dashboardLimit, 0}},
	{path: "/all", raw: true, filters: true, limits: []int{dashboardLimit, 0}},
	{path: "/all_legacy", raw: true, filters: true, limits: []int{dashboardLimit}},
	{path: "/metrics/total_interactions", limits: []int{0}},
	{path: "/metrics/topic_counts", limits: []int{0}},
	{path: "/metrics/model_counts", limits: []int{0}},
	{path: "/questions", limits: []int{dashboardLimit, 0}},
	{path: "/answers", limits: []int{dashboardLimit, 0}},
	// limit bounds the groups here; the dashboard's groupings.
	{path: "/usage", filters: true, limits: []int{dashboardLimit}, groupBy: "model"},
	{path: "/usage", filters: true, limits: []int{dashboardLimit}, groupBy: "day"},
	{path: "/feedback", filters: true, limits: []int{dashboardLimit}, groupBy: "topic"},
}

// mix is one query mix of the issue.
type mix struct {
	name     string
	params   url.Values
	filtered bool // uses filters, so only the /all* routes take it
}

// queryMixes builds the query mixes over the log's window. The
// question id is the busiest question's, asked of the server.
func queryMixes(ctx context.Context, c *client, ds dataset) ([]mix, error) {
	day := func(t time.Time) string { return t.Format("2006-01-02") }
	last30 := ds.end.AddDate(0, 0, -30)
	middle := ds.end.AddDate(0, 0, -benchDays/2)
	with := func(kv ...string) url.Values {
		v := url.Values{"catname": {benchCats[0]}}
		for k := 0; k+1 < len(kv); k += 2 {
			v.Add(kv[k], kv[k+1])
		}
		return v
	}
	var top struct {
		Questions []struct {
			ID string `json:"id"`
		} `json:"questions"`
	}
	if err := c.getJSON(ctx, "/questions", with("limit", "1"), &top); err != nil {
		return nil, fmt.Errorf("busiest question: %w", err)
	}
	if len(top.Questions) == 0 {
		return nil, fmt.Errorf("no questions in CAT %s", benchCats[0])
	}
	return []mix{
		{name: "full range", params: with()},
		{name: "30 days", params: with("startDate", day(last30), "endDate", day(ds.end))},
		{name: "30 days + topic", params: with("startDate", day(last30), "endDate", day(ds.end), "topic", "billing"), filtered: true},
		{name: "2 models + persona", params: with("model", "gpt-4o", "model", "claude-3-5-sonnet", "persona", "customer"), filtered: true},
		{name: "one questionid", params: with("questionid", top.Questions[0].ID), filtered: true},
		{name: "start only", params: with("startDate", day(middle))},
		{name: "end only", params: with("endDate", day(middle))},
	}, nil
}

// client sends authenticated requests over keep-alive connections.
type client struct {
	http    *http.Client
	base    string
	token   string
	workers int
}

func newClient(base, token string, workers int) *client {
	tr := &http.Transport{MaxIdleConns: workers * 2, MaxIdleConnsPerHost: workers * 2, IdleConnTimeout: time.Minute}
	return &client{http: &http.Client{Transport: tr, Timeout: 5 * time.Minute}, base: base, token: token, workers: workers}
}

func (c *client) request(ctx context.Context, path string, params url.Values) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+prefix+path+"?"+params.Encode(), nil) //nolint:gosec // the local server under test
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	return req, nil
}

func (c *client) getJSON(ctx context.Context, path string, params url.Values, out any) error {
	req, err := c.request(ctx, path, params)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req) //nolint:gosec // the local server under test
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %s: %s", path, resp.Status, b)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// stats are one cell's measurements.
type stats struct {
	requests int
	p50, p99 time.Duration
	perSec   float64
	bytes    int64 // body size of one response
}

func (s stats) short() string {
	return fmt.Sprintf("p50 %8s  p99 %8s  %7.1f req/s  %8d B  (%d req)", ms(s.p50), ms(s.p99), s.perSec, s.bytes, s.requests)
}

// drive sends n requests (fewer if the budget runs out first, but at
// least 3) from the client's workers, after one warm-up request, and
// returns exact percentiles of the recorded latencies.
func (c *client) drive(ctx context.Context, path string, base url.Values, limit, n int, budget time.Duration) (stats, error) {
	params := url.Values{}
	for k, v := range base {
		params[k] = slices.Clone(v)
	}
	if limit > 0 {
		params.Set("limit", fmt.Sprint(limit))
	}
	var st stats
	var err error
	if st.bytes, _, err = c.once(ctx, path, params); err != nil { // warm-up
		return st, err
	}
	var (
		mu        sync.Mutex
		latencies []time.Duration
		firstErr  error
		next      atomic.Int64
	)
	const minRequests = 3
	start := time.Now()
	deadline := start.Add(budget)
	var wg sync.WaitGroup
	for range c.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := next.Add(1)
				if k > int64(n) || (k > minRequests && time.Now().After(deadline)) {
					return
				}
				_, d, err := c.once(ctx, path, params)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				latencies = append(latencies, d)
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return st, firstErr
	}
	slices.Sort(latencies)
	st.requests = len(latencies)
	st.p50 = percentile(latencies, 50)
	st.p99 = percentile(latencies, 99)
	st.perSec = float64(len(latencies)) / elapsed.Seconds()
	return st, nil
}

// once sends one request and returns the body size and the latency up to
// the last byte read.
func (c *client) once(ctx context.Context, path string, params url.Values) (int64, time.Duration, error) {
	req, err := c.request(ctx, path, params)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	resp, err := c.http.Do(req) //nolint:gosec // the local server under test
	if err != nil {
		return 0, 0, err
	}
	n, err := io.Copy(io.Discard, resp.Body)
	d := time.Since(start)
	_ = resp.Body.Close()
	if err != nil {
		return 0, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("%s: %s", path, resp.Status)
	}
	return n, d, nil
}

// percentile returns the nearest-rank percentile of sorted samples.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	return sorted[max(rank, 1)-1]
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
}
