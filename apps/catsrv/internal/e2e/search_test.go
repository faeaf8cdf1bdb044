package e2e_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// listPage is one page of /questions with its total.
type listPage struct {
	Questions []struct {
		Question string `json:"question"`
		Count    int64  `json:"count"`
	} `json:"questions"`
	Total int64 `json:"total"`
}

// TestDashboardSearchesOnTheServer: the question list shows one page with
// the total the server counts; typing in its search box asks /questions
// for the matches (q, offset, limit) and shows exactly the server's page.
func TestDashboardSearchesOnTheServer(t *testing.T) {
	chrome := browserPath(t)
	s := newSite(t)
	ctx, cancel := browserContext(t, chrome)
	defer cancel()
	run(ctx, t, "open the page and sign in",
		chromedp.Navigate(s.url+"/?cat=demo&range=all"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), s.admin),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)))
	view := waitView(ctx, t, `document.body.dataset.state === 'ready' && document.body.dataset.query.includes('catname=demo')`)

	var all listPage
	s.api(t, "/questions", view.Query+"&offset=0&limit=10", &all)
	if len(view.Questions) != len(all.Questions) || all.Total <= int64(len(all.Questions)) {
		t.Fatalf("first page shows %d rows, the server has %d of %d: want one full page of more", len(view.Questions), len(all.Questions), all.Total)
	}
	hint := func() string {
		return value(ctx, t, "read the pager", chromedp.Evaluate[string](`document.querySelector('#list-question .pager .hint').textContent`))
	}
	if h := hint(); !strings.HasSuffix(h, " of "+strconv.FormatInt(all.Total, 10)) {
		t.Errorf("pager %q, want the server's total %d", h, all.Total)
	}

	// A word of a question on the first page that not every question has.
	var term string
	var want listPage
	for _, row := range view.Questions {
		for _, w := range strings.Fields(row[0]) {
			w = strings.Trim(strings.ToLower(w), "?.,!'\"")
			if len(w) < 4 {
				continue
			}
			var got listPage
			s.api(t, "/questions", view.Query+"&offset=0&limit=10&q="+w, &got)
			if got.Total > 0 && got.Total < all.Total {
				term, want = w, got
				break
			}
		}
		if term != "" {
			break
		}
	}
	if term == "" {
		t.Fatalf("no word of the first page narrows the questions: %v", view.Questions)
	}
	// The whole term at once, as a paste: one debounced request, so no
	// page of a prefix of the term can be on screen when the check runs.
	run(ctx, t, "search "+term,
		chromedp.SetValue(chromedp.CSS(`input[data-search="question"]`), strings.ToUpper(term)),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('input[data-search="question"]').dispatchEvent(new Event('input'))`))
	searched := waitView(ctx, t, `document.querySelector('#list-question .pager .hint').textContent.endsWith(' of `+
		strconv.FormatInt(want.Total, 10)+`') && !document.getElementById('list-question').hasAttribute('aria-busy')`)
	if len(searched.Questions) != len(want.Questions) {
		t.Fatalf("search shows %d rows, the server %d", len(searched.Questions), len(want.Questions))
	}
	for i, row := range searched.Questions {
		if row[0] != want.Questions[i].Question || row[1] != strconv.FormatInt(want.Questions[i].Count, 10) {
			t.Errorf("row %d: %q, server %+v", i, row, want.Questions[i])
		}
	}
	asked := value(ctx, t, "read the requests", chromedp.Evaluate[bool](`performance.getEntriesByType('resource').some((e) => {
		const u = new URL(e.name);
		return u.pathname.endsWith('/questions') && u.searchParams.get('q') === '`+strings.ToUpper(term)+`' && u.searchParams.get('limit') === '10';
	})`))
	if !asked {
		t.Errorf("the page did not ask /questions for q=%s", strings.ToUpper(term))
	}
	// The analytics result the page loaded is one page, not the whole list.
	whole := value(ctx, t, "read the first request", chromedp.Evaluate[bool](`performance.getEntriesByType('resource').some((e) => {
		const u = new URL(e.name);
		return u.pathname.endsWith('/all_warehouse') && u.searchParams.get('limit') === '10' && u.searchParams.get('offset') === '0';
	})`))
	if !whole {
		t.Errorf("the page did not ask /all_warehouse for one page of the lists")
	}
}
