package e2e_test

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/catsrv/catsrv/core/analytics"
)

// changeText is how the page words a figure's change against the previous
// n days (fmt.js change): relative, one decimal under 10%.
func changeText(cur, prev float64, n int) string {
	period := "previous " + strconv.Itoa(n) + " days"
	if n == 1 {
		period = "previous day"
	}
	if prev == 0 {
		if cur == 0 {
			return "±0% vs " + period
		}
		return "none in " + period
	}
	r := (cur - prev) / prev * 100
	digits := 0
	if math.Abs(r) < 10 {
		digits = 1
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(r, 'f', digits, 64), 64)
	sign := "±"
	if v > 0 {
		sign = "+"
	} else if v < 0 {
		sign = "−"
	}
	return sign + strconv.FormatFloat(math.Abs(v), 'f', digits, 64) + "% vs " + period
}

// figureChange is a headline figure's change as the page shows it.
type figureChange struct {
	Text string `json:"text"`
	Prev string `json:"prev"`
}

// TestCustomRangeAndPreviousPeriod: the interactions figure's change is
// against the previous period of the same length, asked of the same route;
// picking a custom range changes every request's dates, the URL keeps
// it, and its previous period is as long as it.
func TestCustomRangeAndPreviousPeriod(t *testing.T) {
	chrome := browserPath(t)
	out := artifacts(t)
	s := newSite(t)
	ctx, cancel := browserContext(t, chrome)
	defer cancel()
	before := time.Now()
	run(ctx, t, "open the 30-day view of demo and sign in",
		chromedp.Navigate(s.url+"/?cat=demo&range=30"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), s.admin),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)))
	view := waitView(ctx, t, `document.body.dataset.state === 'ready' && document.body.dataset.query.includes('catname=demo')`)
	start, _ := lastDays(t, view.Query, 30, before, time.Now())
	checkPrevious(t, s, view.Query, start, 30, readFigure(ctx, t, "total"))

	// A custom range: the ten days ending ten days ago.
	today := time.Now().UTC().Truncate(24 * time.Hour)
	from, to := today.AddDate(0, 0, -19).Format(analytics.DateLayout), today.AddDate(0, 0, -10).Format(analytics.DateLayout)
	end := today.AddDate(0, 0, -9).Format(analytics.DateLayout)
	run(ctx, t, "pick "+from+" to "+to,
		chromedp.Evaluate[chromedp.Void](`performance.clearResourceTimings()`),
		// Both days, then one change event, as a date picker sends it.
		chromedp.Evaluate[chromedp.Void](`document.getElementById('from').value = '`+from+`'; document.getElementById('to').value = '`+to+`';
document.getElementById('to').dispatchEvent(new Event('change'))`))
	custom := waitView(ctx, t, `document.body.dataset.state === 'ready' && document.body.dataset.query.includes('endDate=`+end+`')`)
	shot(ctx, t, out, "range-custom.png")
	want := url.Values{"catname": {"demo"}, "startDate": {from}, "endDate": {end}}
	if got, err := url.ParseQuery(custom.Query); err != nil || !equalValues(got, want) {
		t.Errorf("custom range asked for %q, want %q", custom.Query, want.Encode())
	}
	checkAgainstAPIDays(t, s, custom, 10)
	checkPrevious(t, s, custom.Query, from, 10, readFigure(ctx, t, "total"))
	// Every analytics request the page made since has the custom range's
	// dates or its previous period's.
	prevStart := today.AddDate(0, 0, -29).Format(analytics.DateLayout)
	asked := value(ctx, t, "read the requests", chromedp.Evaluate[[]string](
		`performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.includes('/api/v1/analytics/') && n.includes('startDate='))`))
	if len(asked) < 3 {
		t.Errorf("only %d dated requests after picking the range: %q", len(asked), asked)
	}
	for _, a := range asked {
		u, err := url.Parse(a)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		if d := [2]string{q.Get("startDate"), q.Get("endDate")}; d != [2]string{from, end} && d != [2]string{prevStart, from} {
			t.Errorf("request %s is neither of the range %s..%s nor of its previous period", a, from, end)
		}
	}
	pageURL := value(ctx, t, "read URL", chromedp.Location())
	if u, err := url.Parse(pageURL); err != nil || u.Query().Get("range") != "custom" || u.Query().Get("from") != from || u.Query().Get("to") != to {
		t.Errorf("page URL %q does not keep the custom range", pageURL)
	}

	// The bookmark opens the same view; a preset leaves the custom range,
	// Back comes back to it.
	run(ctx, t, "reload the bookmark", chromedp.Reload())
	again := waitView(ctx, t, `document.body.dataset.state === 'ready'`)
	if again.Query != custom.Query || again.Total != custom.Total {
		t.Errorf("bookmark shows %q (%s), want %q (%s)", again.Query, again.Total, custom.Query, custom.Total)
	}
	run(ctx, t, "7 days", chromedp.Click(chromedp.CSS(`[data-range="7"]`)))
	waitView(ctx, t, `document.body.dataset.state === 'ready' && location.search.includes('range=7')`)
	run(ctx, t, "back", chromedp.NavigateBack())
	back := waitView(ctx, t, `document.body.dataset.state === 'ready' && location.search.includes('range=custom')`)
	if back.Query != custom.Query {
		t.Errorf("Back shows %q, want %q", back.Query, custom.Query)
	}
	fields := value(ctx, t, "read the pickers", chromedp.Evaluate[[]string](`[document.getElementById('from').value, document.getElementById('to').value]`))
	if !slices.Equal(fields, []string{from, to}) {
		t.Errorf("pickers show %q, want %s and %s", fields, from, to)
	}

	// "All" has no previous period to compare with.
	run(ctx, t, "all", chromedp.Click(chromedp.CSS(`[data-range="all"]`)))
	waitView(ctx, t, `document.body.dataset.state === 'ready' && location.search.includes('range=all')`)
	if c := readFigure(ctx, t, "total"); c.Text != "" || c.Prev != "" {
		t.Errorf("all time shows a change %+v", c)
	}
}

// readFigure reads a headline figure's change and the previous value the
// page compared with.
func readFigure(ctx context.Context, t *testing.T, id string) figureChange {
	t.Helper()
	return value(ctx, t, "read the change of "+id, chromedp.Evaluate[figureChange](fmt.Sprintf(
		`(() => { const c = document.getElementById(%q); return {text: c.textContent, prev: c.dataset.prev || ''}; })()`, id+"-change")))
}

// checkPrevious checks a total's change against the API's totals of the
// query's period and of the n days before start.
func checkPrevious(t *testing.T, s *site, query, start string, n int, got figureChange) {
	t.Helper()
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	var cur, prev warehouseBody
	s.api(t, "/all_warehouse", q.Encode(), &cur)
	day, err := time.Parse(analytics.DateLayout, start)
	if err != nil {
		t.Fatal(err)
	}
	q.Set("startDate", day.AddDate(0, 0, -n).Format(analytics.DateLayout))
	q.Set("endDate", start)
	s.api(t, "/all_warehouse", q.Encode(), &prev)
	if prev.Total == 0 || cur.Total == 0 {
		t.Fatalf("seeded data has %d interactions in the range and %d in the previous period: nothing to compare", cur.Total, prev.Total)
	}
	want := changeText(float64(cur.Total), float64(prev.Total), n)
	if got.Prev != strconv.FormatInt(prev.Total, 10) || got.Text != want {
		t.Errorf("change shown %q against %s; want %q against %d (%s..%s)", got.Text, got.Prev, want, prev.Total, q.Get("startDate"), start)
	}
}

// checkAgainstAPIDays is checkAgainstAPI for a range of n days.
func checkAgainstAPIDays(t *testing.T, s *site, view pageView, n int) {
	t.Helper()
	var want warehouseBody
	s.api(t, "/all_warehouse", view.Query, &want)
	if view.Total != strconv.FormatInt(want.Total, 10) {
		t.Errorf("page total %s, API %d", view.Total, want.Total)
	}
	if len(view.Days) != n {
		t.Errorf("daily chart has %d days, want %d", len(view.Days), n)
	}
	var topics [][]string
	for _, c := range want.TopicCounts {
		topics = append(topics, []string{c.Topic, strconv.FormatInt(c.Count, 10), strconv.FormatFloat(c.Percentage, 'f', -1, 64)})
	}
	if !slices.EqualFunc(view.Topics, topics, slices.Equal) {
		t.Errorf("page topics\n %q\nAPI\n %q", view.Topics, topics)
	}
}
