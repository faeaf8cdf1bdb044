package e2e_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/catsrv/catsrv/core/analytics"
)

// usageSeed gives the demo interactions tokens, costs, latencies (one in
// ten without) and votes (one in four up, one in nine down, with a
// comment), all from their position: the same data on every run.
func usageSeed(k int, i *analytics.Interaction) {
	i.Usage, i.Feedback = analytics.Usage{}, analytics.Feedback{} // the demo's own, replaced
	i.Usage.InputTokens = int64(100 + k%7*50)
	i.Usage.OutputTokens = int64(200 + k%11*30)
	i.Usage.CostUSD = float64(1+k%13) / 1000
	if k%10 != 0 {
		ms := float64(200 + k*37%3000)
		i.Usage.LatencyMS = &ms
	}
	switch {
	case k%9 == 0:
		i.Feedback = analytics.Feedback{Rating: analytics.RatingDown, Comment: "not what I asked #" + strconv.Itoa(k)}
	case k%4 == 0:
		i.Feedback = analytics.Feedback{Rating: analytics.RatingUp}
	}
}

// latencyBody, usageStats, usageBody and feedbackBody are the routes'
// answers (docs/api.md).
type latencyBody struct {
	P50 *float64 `json:"p50"`
	P90 *float64 `json:"p90"`
	P99 *float64 `json:"p99"`
	Max *float64 `json:"max"`
}

type usageStats struct {
	Key          string      `json:"key"`
	Total        int64       `json:"total_interactions"`
	InputTokens  int64       `json:"input_tokens"`
	OutputTokens int64       `json:"output_tokens"`
	CostUSD      float64     `json:"cost_usd"`
	LatencyMS    latencyBody `json:"latency_ms"`
}

type usageBody struct {
	usageStats
	Groups []usageStats `json:"groups"`
}

type feedbackGroup struct {
	Key          string   `json:"key"`
	Up           int64    `json:"up"`
	Down         int64    `json:"down"`
	Satisfaction *float64 `json:"satisfaction"`
}

type feedbackBody struct {
	feedbackGroup
	Groups []feedbackGroup `json:"groups"`
}

type reviewBody struct {
	Entries []struct {
		Time           time.Time `json:"time"`
		Question       string    `json:"question"`
		Answer         string    `json:"answer"`
		Model          string    `json:"model"`
		Topic          string    `json:"topic"`
		Rating         string    `json:"rating"`
		Reason         string    `json:"reason"`
		Comment        string    `json:"comment"`
		ConversationID string    `json:"conversation_id"`
	} `json:"entries"`
	NextCursor string `json:"next_cursor"`
}

// shownFigure is a headline figure as the page shows it.
type shownFigure struct {
	Value  string `json:"value"`
	Change string `json:"change"`
	Prev   string `json:"prev"`
}

func readShownFigure(ctx context.Context, t *testing.T, id string) shownFigure {
	t.Helper()
	return value(ctx, t, "read "+id, chromedp.Evaluate[shownFigure](fmt.Sprintf(
		`(() => { const v = document.getElementById(%q), c = document.getElementById(%q);
  return {value: v.dataset.value || '', change: c.textContent, prev: c.dataset.prev || ''}; })()`, id, id+"-change")))
}

// dataCells reads a table's rows: the first cell's text, then each
// cell's data-v (its exact value) or, without one, its text.
func dataCells(ctx context.Context, t *testing.T, id string) [][]string {
	t.Helper()
	return value(ctx, t, "read "+id, chromedp.Evaluate[[][]string](fmt.Sprintf(
		`[...document.querySelectorAll('#%s tbody tr')].map((r) => [...r.cells].map((c, i) => i && c.dataset.v !== undefined ? c.dataset.v : c.textContent.trim()))`, id)))
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return v
}

// pointsText is the change of a ratio in percentage points (fmt.js).
func pointsText(cur, prev float64, n int) string {
	d, _ := strconv.ParseFloat(strconv.FormatFloat((cur-prev)*100, 'f', 1, 64), 64)
	sign := "±"
	if d > 0 {
		sign = "+"
	} else if d < 0 {
		sign = "−"
	}
	return sign + strconv.FormatFloat(math.Abs(d), 'f', 1, 64) + " pts vs previous " + strconv.Itoa(n) + " days"
}

// TestUsagePanels: on demo data with tokens, costs, latencies and votes,
// the headline figures and their changes against the previous 30 days,
// the tokens and cost per day by model, the latency percentiles per model,
// the satisfaction by topic and the review queue (two pages, then an
// entry's thread) are what /usage, /feedback and /review answer for the
// page's selection.
func TestUsagePanels(t *testing.T) {
	chrome := browserPath(t)
	out := artifacts(t)
	s := newSiteWith(t, siteOptions{decorate: usageSeed})
	ctx, cancel := browserContext(t, chrome)
	defer cancel()
	run(ctx, t, "open the 30-day view of demo and sign in",
		chromedp.Navigate(s.url+"/?cat=demo&range=30"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), s.admin),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)))
	view := waitView(ctx, t, `document.body.dataset.state === 'ready' && document.body.dataset.query.includes('catname=demo')`)
	viewportShot(ctx, t, out, "usage-0-figures.png")
	q, err := url.ParseQuery(view.Query)
	if err != nil {
		t.Fatal(err)
	}
	start, _ := time.Parse(analytics.DateLayout, q.Get("startDate"))
	prevQ := url.Values{"catname": {"demo"}, "startDate": {start.AddDate(0, 0, -30).Format(analytics.DateLayout)}, "endDate": {q.Get("startDate")}}

	// The headline figures and their changes.
	var cur, prev usageBody
	s.api(t, "/usage", view.Query+"&group_by=model", &cur)
	s.api(t, "/usage", prevQ.Encode()+"&group_by=model", &prev)
	if cur.Total == 0 || prev.Total == 0 || cur.LatencyMS.P50 == nil || prev.LatencyMS.P50 == nil {
		t.Fatalf("seeded usage: %+v now, %+v before", cur.usageStats, prev.usageStats)
	}
	tok := func(u usageStats) float64 { return float64(u.InputTokens + u.OutputTokens) }
	for _, c := range []struct {
		id        string
		cur, prev float64
	}{
		{"tokens", tok(cur.usageStats), tok(prev.usageStats)},
		{"cost", cur.CostUSD, prev.CostUSD},
		{"latency", *cur.LatencyMS.P50, *prev.LatencyMS.P50},
	} {
		got := readShownFigure(ctx, t, c.id)
		if num(t, got.Value) != c.cur || num(t, got.Prev) != c.prev || got.Change != changeText(c.cur, c.prev, 30) {
			t.Errorf("%s shows %+v; want %v, previous %v, %q", c.id, got, c.cur, c.prev, changeText(c.cur, c.prev, 30))
		}
	}
	var fb, fbPrev feedbackBody
	s.api(t, "/feedback", view.Query+"&group_by=topic", &fb)
	s.api(t, "/feedback", prevQ.Encode()+"&group_by=topic", &fbPrev)
	if fb.Satisfaction == nil || fbPrev.Satisfaction == nil {
		t.Fatalf("seeded votes: %+v now, %+v before", fb.feedbackGroup, fbPrev.feedbackGroup)
	}
	if got, want := readShownFigure(ctx, t, "satisfaction"), pointsText(*fb.Satisfaction, *fbPrev.Satisfaction, 30); num(t, got.Value) != *fb.Satisfaction || got.Change != want {
		t.Errorf("satisfaction shows %+v; want %v, %q", got, *fb.Satisfaction, want)
	}

	// The charts, once scrolled to.
	run(ctx, t, "scroll to the usage charts", chromedp.ScrollIntoView(chromedp.ID("fig-tokens-day")),
		chromedp.Poll[chromedp.Void](`document.getElementById('usage').dataset.state === 'ready'`, chromedp.WithPollingTimeout(30*time.Second)),
		// Drawn once in view: the charts are drawn when scrolled to.
		chromedp.Poll[chromedp.Void](`document.getElementById('chart-tokens-day').dataset.drawn === 'true' && document.getElementById('chart-cost-day').dataset.drawn === 'true'`,
			chromedp.WithPollingTimeout(30*time.Second)))
	viewportShot(ctx, t, out, "usage-1-tokens.png")
	var wantLatency [][]string
	for _, g := range cur.Groups {
		if g.LatencyMS.Max == nil {
			continue
		}
		f := func(v *float64) string { return strconv.FormatFloat(*v, 'f', -1, 64) }
		wantLatency = append(wantLatency, []string{g.Key, f(g.LatencyMS.P50), f(g.LatencyMS.P90), f(g.LatencyMS.P99), f(g.LatencyMS.Max), strconv.FormatInt(g.Total, 10)})
	}
	if got := dataCells(ctx, t, "table-latency"); !slices.EqualFunc(got, wantLatency, slices.Equal) || len(got) < 2 {
		t.Errorf("latency table\n %q\nAPI\n %q", got, wantLatency)
	}
	days := dataCells(ctx, t, "table-tokens-day")
	costs := dataCells(ctx, t, "table-cost-day")
	head := value(ctx, t, "read the models", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#table-tokens-day thead th')].slice(1).map((h) => h.textContent)`))
	if len(days) != 30 || len(head) != len(cur.Groups) || len(head) > 5 {
		t.Fatalf("tokens per day: %d days, models %q; want 30 days, the %d models", len(days), head, len(cur.Groups))
	}
	for m, model := range head {
		var perDay usageBody
		s.api(t, "/usage", view.Query+"&group_by=day&limit=1000&model="+url.QueryEscape(model), &perDay)
		byDay := map[string]usageStats{}
		for _, d := range perDay.Groups {
			byDay[d.Key] = d
		}
		for k, row := range days {
			d := byDay[row[0]]
			if num(t, row[m+1]) != tok(d) || num(t, costs[k][m+1]) != d.CostUSD {
				t.Errorf("%s on %s: page %s tokens, $%s; API %v, $%v", model, row[0], row[m+1], costs[k][m+1], tok(d), d.CostUSD)
			}
		}
	}
	var wantSat [][]string
	for _, g := range fb.Groups {
		sat := "no votes"
		if g.Satisfaction != nil {
			sat = strconv.FormatFloat(*g.Satisfaction, 'f', -1, 64)
		}
		wantSat = append(wantSat, []string{g.Key, strconv.FormatInt(g.Up, 10), strconv.FormatInt(g.Down, 10), sat})
	}
	if got := dataCells(ctx, t, "table-satisfaction"); !slices.EqualFunc(got, wantSat, slices.Equal) || len(got) < 2 {
		t.Errorf("satisfaction table\n %q\nAPI\n %q", got, wantSat)
	}
	// Usage asked once a figure (this and the previous period), then once a model.
	asked := value(ctx, t, "count the usage requests", chromedp.Evaluate[int](
		`performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/v1/analytics/usage')).length`))
	if asked != 2+len(head) {
		t.Errorf("the page asked /usage %d times, want %d", asked, 2+len(head))
	}

	// The review queue: two pages, then a thread.
	run(ctx, t, "scroll to the review queue", chromedp.ScrollIntoView(chromedp.ID("review")),
		chromedp.Poll[chromedp.Void](`document.getElementById('review').dataset.state === 'ready'`, chromedp.WithPollingTimeout(30*time.Second)))
	var page reviewBody
	s.api(t, "/review", view.Query+"&kind=down&limit=10", &page)
	checkReview := func(what string, body reviewBody) {
		t.Helper()
		got := dataCells(ctx, t, "review table")
		if len(got) != len(body.Entries) || len(got) == 0 {
			t.Fatalf("%s: review shows %d entries, API %d", what, len(got), len(body.Entries))
		}
		for k, e := range body.Entries {
			want := []string{e.Time.UTC().Format("2006-01-02 15:04:05"), e.Question, e.Answer, e.Model, e.Topic, e.Rating, e.Reason, e.Comment}
			if !slices.Equal(got[k][:8], want) {
				t.Errorf("%s: review row %d = %q, API %q", what, k, got[k][:8], want)
			}
		}
	}
	for _, e := range page.Entries {
		if e.Rating != analytics.RatingDown || e.Comment == "" {
			t.Fatalf("seeded votes: the down queue has %+v", e)
		}
	}
	checkReview("first page", page)
	if page.NextCursor == "" {
		t.Fatal("the seeded review queue fits in one page")
	}
	var older reviewBody
	s.api(t, "/review", view.Query+"&kind=down&limit=10&cursor="+url.QueryEscape(page.NextCursor), &older)
	run(ctx, t, "older entries", chromedp.Click(chromedp.ID("review-next")),
		chromedp.Poll[chromedp.Void](`document.getElementById('review-page').textContent.startsWith('Entries 11')`, chromedp.WithPollingTimeout(30*time.Second)))
	checkReview("second page", older)
	viewportShot(ctx, t, out, "usage-2-review.png")

	entry := older.Entries[0]
	run(ctx, t, "open the entry's thread",
		chromedp.Click(chromedp.CSS(`#review tbody tr:first-child button[data-entry]`)),
		chromedp.Poll[chromedp.Void](`document.getElementById('thread').dataset.state === 'ready'`, chromedp.WithPollingTimeout(30*time.Second)))
	thread := value(ctx, t, "read the thread", chromedp.Evaluate[threadView](readThread))
	want := conversationTurns(t, s, "demo", entry.ConversationID)
	if thread.Title != "Conversation "+entry.ConversationID || len(thread.Turns) != len(want) || thread.Here < 0 ||
		thread.Turns[thread.Here][1] != "User "+entry.Question {
		t.Errorf("thread of the review entry %+v shows %q, %d turns (the API has %d), marked %d", entry, thread.Title, len(thread.Turns), len(want), thread.Here)
	}
}

// TestUsageRoutesMissing: against a server without /usage, /feedback and
// /review (an older one: they answer 404), the page hides their figures
// and panels and shows the rest as before, without an error.
func TestUsageRoutesMissing(t *testing.T) {
	chrome := browserPath(t)
	s := newSiteWith(t, siteOptions{decorate: usageSeed, wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/api/v1/analytics/usage", "/api/v1/analytics/feedback", "/api/v1/analytics/review":
				http.NotFound(w, r)
			default:
				h.ServeHTTP(w, r)
			}
		})
	}})
	ctx, cancel := browserContext(t, chrome)
	defer cancel()
	run(ctx, t, "open the 30-day view of demo and sign in",
		chromedp.Navigate(s.url+"/?cat=demo&range=30"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), s.admin),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)))
	view := waitView(ctx, t, `document.body.dataset.state === 'ready' && document.body.dataset.query.includes('catname=demo')`)
	checkAgainstAPI(t, s, view)
	run(ctx, t, "scroll to the end", chromedp.ScrollIntoView(chromedp.ID("log-next")))
	run(ctx, t, "wait for the review queue's answer", chromedp.Poll[chromedp.Void](`document.getElementById('review').hidden`, chromedp.WithPollingTimeout(30*time.Second)))
	shown := value(ctx, t, "read what is shown", chromedp.Evaluate[map[string]bool](
		`Object.fromEntries(['stat-total', 'stat-tokens', 'stat-cost', 'stat-latency', 'stat-satisfaction', 'usage', 'review', 'chatlog', 'usage-error'].map((id) => [id, !document.getElementById(id).hidden]))`))
	want := map[string]bool{"stat-total": true, "stat-tokens": false, "stat-cost": false, "stat-latency": false, "stat-satisfaction": false,
		"usage": false, "review": false, "chatlog": true, "usage-error": false}
	if !equalBools(shown, want) {
		t.Errorf("shown %v, want %v", shown, want)
	}
}
