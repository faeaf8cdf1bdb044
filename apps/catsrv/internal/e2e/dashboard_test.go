package e2e_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/analyticsapi"

	"github.com/chromedp/chromedp"

	"github.com/catsrv/catsrv/core/analytics"
)

// pageView is what the page shows, read from the DOM.
type pageView struct {
	State     string     `json:"state"`
	Status    string     `json:"status"`
	Query     string     `json:"query"`
	Total     string     `json:"total"`
	Perf      string     `json:"perf"`
	Source    string     `json:"source"`
	Chips     []string   `json:"chips"`
	Topics    [][]string `json:"topics"`
	Models    [][]string `json:"models"`
	Personas  [][]string `json:"personas"`
	Days      [][]string `json:"days"`
	Questions [][]string `json:"questions"`
	Log       [][]string `json:"log"`
	Error     string     `json:"error"`
}

const readView = `(() => {
  const rows = (sel) => [...document.querySelectorAll(sel)].map((r) => [...r.cells].map((c) => c.textContent.trim()));
  return {
    state: document.body.dataset.state || '', status: document.getElementById('status').textContent,
    query: document.body.dataset.query || '', total: document.getElementById('total').dataset.value || '',
    perf: document.getElementById('perf').textContent, source: document.getElementById('source').textContent,
    chips: [...document.querySelectorAll('#chips .chip')].map((c) => c.dataset.filter + '=' + c.dataset.value),
    topics: rows('#table-topic tbody tr'), models: rows('#table-model tbody tr'), personas: rows('#table-persona tbody tr'),
    days: rows('#table-daily tbody tr'), questions: rows('#list-question tbody tr'), log: rows('#chatlog tbody tr'),
    error: document.getElementById('error').hidden ? '' : document.getElementById('error').textContent,
  };
})()`

// warehouseBody is the part of /all_warehouse the page shows.
type warehouseBody struct {
	Total         int64                        `json:"total_interactions"`
	TopicCounts   []analyticsapi.TopicCount    `json:"topic_counts"`
	ModelCounts   []analyticsapi.ModelCount    `json:"model_counts"`
	PersonaCounts []analyticsapi.PersonaCount  `json:"persona_counts"`
	Questions     []analyticsapi.QuestionEntry `json:"questions"`
	DataSource    string                       `json:"data_source"`
}

// TestDashboard walks the admin's three clicks: sign in, pick the CAT and
// the last 30 days, click the billing bar; the page must then show what the
// API answers for the same selection, and export it as CSV.
func TestDashboard(t *testing.T) {
	chrome := browserPath(t)
	out := artifacts(t)
	s := newSite(t)

	ctx, cancel := browserContext(t, chrome)
	defer cancel()
	downloads := filepath.Join(out, "downloads")
	run(ctx, t, "open the page",
		allowDownloads(downloads),
		chromedp.Navigate(s.url+"/"),
		chromedp.WaitVisible(chromedp.ID("token")))
	shot(ctx, t, out, "1-signin.png")

	run(ctx, t, "sign in",
		chromedp.SendKeys(chromedp.ID("token"), s.admin),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)))
	first := waitView(ctx, t, `document.body.dataset.state === 'ready'`)
	if !strings.Contains(first.Query, "catname=acme") {
		t.Errorf("first view is not of the first CAT: query %q", first.Query)
	}

	run(ctx, t, "pick CAT demo",
		chromedp.SetValue(chromedp.ID("cat"), "demo"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('cat').dispatchEvent(new Event('change'))`))
	waitView(ctx, t, `document.body.dataset.state === 'ready' && document.body.dataset.query.includes('catname=demo')`)

	before := time.Now()
	run(ctx, t, "pick 30 days", chromedp.Click(chromedp.CSS(`[data-range="30"]`)))
	unfiltered := waitView(ctx, t, `document.body.dataset.state === 'ready' && document.body.dataset.query.includes('startDate=')`)
	start, end := lastDays(t, unfiltered.Query, 30, before, time.Now())
	checkAgainstAPI(t, s, unfiltered)

	clickBar(ctx, t, "topic", "billing")
	view := waitView(ctx, t, `document.body.dataset.state === 'ready' && document.body.dataset.query.includes('topic=billing')`)
	shot(ctx, t, out, "2-billing-30-days.png")
	wantQuery := url.Values{"catname": {"demo"}, "startDate": {start}, "endDate": {end}, "topic": {"billing"}}
	if got, err := url.ParseQuery(view.Query); err != nil || !equalValues(got, wantQuery) {
		t.Errorf("page asked for %q, want %q", view.Query, wantQuery.Encode())
	}
	if !slices.Equal(view.Chips, []string{"topic=billing"}) {
		t.Errorf("chips = %q, want the billing topic", view.Chips)
	}
	checkAgainstAPI(t, s, view)
	pageURL := value(ctx, t, "read URL", chromedp.Location())
	if u, err := url.Parse(pageURL); err != nil || u.Query().Get("topic") != "billing" || u.Query().Get("range") != "30" || u.Query().Get("cat") != "demo" {
		t.Errorf("page URL %q does not keep the view", pageURL)
	}

	checkChatLog(t, s, view)
	checkCSVExport(ctx, t, s, view, downloads)

	run(ctx, t, "raw source", chromedp.Click(chromedp.CSS(`[data-source="raw"]`)))
	raw := waitView(ctx, t, `document.body.dataset.state === 'ready' && location.search.includes('source=raw')`)
	if raw.Total != view.Total || !strings.Contains(raw.Source, "raw") || !strings.Contains(view.Source, "warehouse") {
		t.Errorf("raw shows total %s from %q, warehouse %s from %q", raw.Total, raw.Source, view.Total, view.Source)
	}

	// Removing the chip brings the unfiltered numbers back.
	run(ctx, t, "remove the billing chip", chromedp.Click(chromedp.CSS(`#chips .chip[data-filter="topic"]`)))
	back := waitView(ctx, t, `document.body.dataset.state === 'ready' && !location.search.includes('topic=')`)
	if len(back.Chips) != 0 || back.Total != unfiltered.Total {
		t.Errorf("after removing the chip: chips %q, total %s; want none and %s", back.Chips, back.Total, unfiltered.Total)
	}

	// The keyboard alone reaches the charts' data: open the persona table
	// and press Enter on its first entry.
	run(ctx, t, "open the persona table by keyboard",
		chromedp.Focus(chromedp.CSS("#fig-persona summary")),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS("#table-persona button")),
		chromedp.Focus(chromedp.CSS("#table-persona button")),
		chromedp.KeyEvent("\r"))
	keyed := waitView(ctx, t, `document.body.dataset.state === 'ready' && location.search.includes('persona=')`)
	if len(keyed.Chips) != 1 || keyed.Chips[0] != "persona="+back.Personas[0][0] {
		t.Errorf("Enter on the first persona gave chips %q, want persona=%s", keyed.Chips, back.Personas[0][0])
	}
	checkAgainstAPI(t, s, keyed)

	// A phone's width; tall, so that one viewport screenshot shows the
	// charts (a full-page one would measure the scrolled chat log too).
	run(ctx, t, "phone width", chromedp.EmulateViewport(390, 2400))
	waitView(ctx, t, `document.body.dataset.state === 'ready'`)
	// The charts in that viewport are drawn (each when it comes into view).
	run(ctx, t, "wait for the charts in view", chromedp.Poll[chromedp.Void](
		`['topic', 'model', 'persona', 'daily'].every((n) => document.getElementById('chart-' + n).dataset.drawn === 'true')`,
		chromedp.WithPollingTimeout(30*time.Second)))
	viewportShot(ctx, t, out, "3-phone.png")
	run(ctx, t, "laptop width", chromedp.EmulateViewport(1366, 900))

	// A bookmarked view that matches nothing shows the empty state.
	run(ctx, t, "empty view", chromedp.Navigate(s.url+"/?cat=demo&range=7&topic=no-such-topic"))
	empty := waitView(ctx, t, `document.body.dataset.state === 'empty'`)
	if empty.Status != "No interactions in this range." || empty.Total != "0" {
		t.Errorf("empty view: status %q, total %q", empty.Status, empty.Total)
	}
	shot(ctx, t, out, "4-empty.png")

	// A token the server refuses sends the admin back to sign-in with the
	// API's own message: acme's analytics are public, but its chat log
	// needs an admin.
	run(ctx, t, "bad token",
		chromedp.Evaluate[chromedp.Void](`sessionStorage.setItem('catsrv.token', 'not-a-token')`),
		chromedp.Reload())
	run(ctx, t, "wait for the sign-in error", chromedp.WaitVisible(chromedp.ID("signin-error")))
	signinError := value(ctx, t, "read the sign-in error", chromedp.Text(chromedp.ID("signin-error")))
	apiMessage := errorMessage(t, s.url+"/api/v1/analytics/interactions?catname=acme", "not-a-token")
	if signinError != "The server refused the token: "+apiMessage {
		t.Errorf("sign-in error %q, want the API's message %q", signinError, apiMessage)
	}
	shot(ctx, t, out, "5-refused-token.png")
}

// checkAgainstAPI compares the page's numbers with the API's answer for
// the query the page used.
func checkAgainstAPI(t *testing.T, s *site, view pageView) {
	t.Helper()
	var want warehouseBody
	s.api(t, "/all_warehouse", view.Query, &want)
	if view.Total != strconv.FormatInt(want.Total, 10) {
		t.Errorf("page total %s, API %d", view.Total, want.Total)
	}
	var topics, models, personas, questions [][]string
	for _, c := range want.TopicCounts {
		topics = append(topics, []string{c.Topic, strconv.FormatInt(c.Count, 10), strconv.FormatFloat(c.Percentage, 'f', -1, 64)})
	}
	for _, c := range want.ModelCounts {
		models = append(models, []string{c.Membership, strconv.FormatInt(c.Count, 10)})
	}
	for _, c := range want.PersonaCounts {
		personas = append(personas, []string{c.Persona, strconv.FormatInt(c.Count, 10)})
	}
	for _, q := range want.Questions[:min(10, len(want.Questions))] {
		questions = append(questions, []string{q.Question, strconv.FormatInt(q.Count, 10)})
	}
	for _, c := range []struct {
		name      string
		got, want [][]string
	}{{"topics", view.Topics, topics}, {"models", view.Models, models}, {"personas", view.Personas, personas}, {"questions", view.Questions, questions}} {
		if !slices.EqualFunc(c.got, c.want, slices.Equal) {
			t.Errorf("page %s\n %q\nAPI\n %q", c.name, c.got, c.want)
		}
	}
	var daily struct {
		DailyCounts []struct {
			Date  string `json:"date"`
			Count int64  `json:"count"`
		} `json:"daily_counts"`
	}
	s.api(t, "/daily_counts", view.Query, &daily)
	shown := map[string]string{}
	for _, d := range view.Days {
		shown[d[0]] = d[1]
	}
	var sum int64
	for _, d := range daily.DailyCounts {
		if shown[d.Date] != strconv.FormatInt(d.Count, 10) {
			t.Errorf("day %s: page %q, API %d", d.Date, shown[d.Date], d.Count)
		}
		sum += d.Count
	}
	if sum != want.Total || len(view.Days) != 30 {
		t.Errorf("daily counts sum to %d (total %d) over %d days shown, want 30", sum, want.Total, len(view.Days))
	}
}

// checkChatLog compares the chat log's first page with the API's.
func checkChatLog(t *testing.T, s *site, view pageView) {
	t.Helper()
	var page struct {
		Interactions []struct {
			Question, Answer, Topic, Model, Persona string
			UserID                                  string `json:"user_id"`
		} `json:"interactions"`
	}
	s.api(t, "/interactions", view.Query+"&limit=20", &page)
	if len(view.Log) != len(page.Interactions) || len(view.Log) == 0 {
		t.Fatalf("chat log shows %d rows, API %d", len(view.Log), len(page.Interactions))
	}
	for k, i := range page.Interactions {
		if got := view.Log[k][1:7]; !slices.Equal(got, []string{i.Question, i.Answer, i.Topic, i.Model, i.Persona, i.UserID}) {
			t.Errorf("chat log row %d = %q, API %+v", k, got, i)
		}
	}
}

// checkCSVExport clicks the CSV export and checks the downloaded file
// against the API's listing of the same selection.
func checkCSVExport(ctx context.Context, t *testing.T, s *site, view pageView, dir string) {
	t.Helper()
	run(ctx, t, "export CSV", chromedp.Click(chromedp.ID("export-csv")))
	var file string
	deadline := time.Now().Add(30 * time.Second)
	for file == "" && time.Now().Before(deadline) {
		matches, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
		if len(matches) == 1 {
			file = matches[0]
		}
		time.Sleep(100 * time.Millisecond)
	}
	if file == "" {
		t.Fatal("no CSV download appeared")
	}
	if !strings.HasPrefix(filepath.Base(file), "demo_") {
		t.Errorf("download named %q", filepath.Base(file))
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatalf("export is not CSV: %v", err)
	}
	if len(records) == 0 || !slices.Equal(records[0][:6], []string{"time", "question", "answer", "topic", "model", "persona"}) {
		t.Fatalf("CSV header %q", records[:min(1, len(records))])
	}
	total, err := strconv.Atoi(view.Total)
	if err != nil || len(records)-1 != total {
		t.Errorf("CSV has %d rows, page total %s", len(records)-1, view.Total)
	}
	var page struct {
		Interactions []struct {
			Time                                    time.Time
			Question, Answer, Topic, Model, Persona string
			UserID                                  string `json:"user_id"`
		} `json:"interactions"`
	}
	s.api(t, "/interactions", view.Query+"&limit=1000", &page)
	for k, i := range page.Interactions[:min(len(page.Interactions), len(records)-1)] {
		want := []string{i.Time.UTC().Format(time.RFC3339Nano), i.Question, i.Answer, i.Topic, i.Model, i.Persona}
		for c := range want {
			if strings.IndexAny(want[c][:min(1, len(want[c]))], "=+-@") == 0 {
				want[c] = "'" + want[c]
			}
		}
		if got := records[k+1][:6]; !slices.Equal(got, want) {
			t.Errorf("CSV row %d = %q, API %q", k+1, got, want)
			break
		}
	}
}

// clickBar scrolls to a bar chart, waits until the page has drawn it (a
// chart is drawn when it comes into view) and clicks the bar of key, where
// the page says it drew it, with a real mouse click.
func clickBar(ctx context.Context, t *testing.T, chart, key string) {
	t.Helper()
	find := `(() => {
  const c = document.getElementById('chart-` + chart + `');
  if (c.dataset.drawn !== 'true') return null;
  const bar = JSON.parse(c.dataset.bars || '[]').find((b) => b.key === ` + strconv.Quote(key) + `);
  if (!bar) return {X: -1, Y: -1};
  const r = c.getBoundingClientRect();
  return {X: r.left + bar.x, Y: r.top + bar.y};
})()`
	run(ctx, t, "scroll to the "+chart+" chart and wait for its drawing",
		chromedp.ScrollIntoView(chromedp.ID("chart-"+chart)),
		chromedp.Poll[chromedp.Void](find+` !== null`, chromedp.WithPollingTimeout(30*time.Second)))
	pos := value(ctx, t, "find the "+key+" bar", chromedp.Evaluate[struct{ X, Y float64 }](find))
	if pos.X < 0 {
		t.Fatalf("no %s bar in the %s chart", key, chart)
	}
	run(ctx, t, "click the "+key+" bar", chromedp.MouseClickXY(pos.X, pos.Y))
}

// waitView waits until the condition holds on the page, then reads it.
func waitView(ctx context.Context, t *testing.T, cond string) pageView {
	t.Helper()
	run(ctx, t, "wait for "+cond, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(30*time.Second)))
	view := value(ctx, t, "read the page", chromedp.Evaluate[pageView](readView))
	if view.Error != "" {
		t.Errorf("page shows an error: %s", view.Error)
	}
	return view
}

// lastDays checks that the query asks for the last n UTC days, today
// included, by the clock at some moment between from and to (the test may
// cross midnight), and returns its startDate and endDate.
func lastDays(t *testing.T, query string, n int, from, to time.Time) (start, end string) {
	t.Helper()
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	start, end = q.Get("startDate"), q.Get("endDate")
	for _, at := range []time.Time{from, to} {
		today := at.UTC().Truncate(24 * time.Hour)
		if start == today.AddDate(0, 0, 1-n).Format(analytics.DateLayout) && end == today.AddDate(0, 0, 1).Format(analytics.DateLayout) {
			return start, end
		}
	}
	t.Fatalf("query %q is not the last %d days", query, n)
	return "", ""
}

func equalValues(a, b url.Values) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}
