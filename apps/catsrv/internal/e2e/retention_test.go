package e2e_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/catsrv/catsrv/core/catconfig"
)

// TestRangesRespectRetention: a CAT that keeps 20 days of interactions
// (analytics.retention_days: 19, today and the 19 days before it) offers
// no preset older than that, a bookmarked 90-day view becomes what is
// kept, and "All" asks for the kept days only; another CAT keeps its
// presets.
func TestRangesRespectRetention(t *testing.T) {
	chrome := browserPath(t)
	s := newSiteWithCats(t, nil, func(acme, _ *catconfig.Cat) { acme.Analytics.RetentionDays = 19 })
	ctx, cancel := browserContext(t, chrome)
	defer cancel()
	from := time.Now()
	run(ctx, t, "open a 90-day view of acme and sign in",
		chromedp.Navigate(s.url+"/?cat=acme&range=90"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), s.admin),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)))
	view := waitView(ctx, t, `document.body.dataset.state === 'ready' && document.body.dataset.query.includes('catname=acme')`)
	lastDays(t, view.Query, 20, from, time.Now())
	disabled := func() map[string]bool {
		return value(ctx, t, "read the presets", chromedp.Evaluate[map[string]bool](
			`Object.fromEntries([...document.querySelectorAll('[data-range]')].map((b) => [b.dataset.range, b.disabled]))`))
	}
	if got, want := disabled(), map[string]bool{"7": false, "30": true, "90": true, "all": false}; !equalBools(got, want) {
		t.Errorf("presets disabled %v, want %v", got, want)
	}
	pressed := value(ctx, t, "read the pressed preset", chromedp.Evaluate[string](`document.querySelector('[data-range][aria-pressed="true"]').dataset.range`))
	if pressed != "all" {
		t.Errorf("pressed preset %q, want all (the 90 days asked for are more than acme keeps)", pressed)
	}

	run(ctx, t, "the 7-day preset", chromedp.Click(chromedp.CSS(`[data-range="7"]`)))
	view = waitView(ctx, t, `document.body.dataset.state === 'ready' && new URLSearchParams(document.body.dataset.query).get('startDate') !== null && document.querySelector('[data-range="7"]').getAttribute('aria-pressed') === 'true'`)
	lastDays(t, view.Query, 7, from, time.Now())

	run(ctx, t, "switch to demo, which keeps everything",
		chromedp.SetValue(chromedp.ID("cat"), "demo"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('cat').dispatchEvent(new Event('change'))`))
	waitView(ctx, t, `document.body.dataset.state === 'ready' && document.body.dataset.query.includes('catname=demo')`)
	if got, want := disabled(), map[string]bool{"7": false, "30": false, "90": false, "all": false}; !equalBools(got, want) {
		t.Errorf("demo's presets disabled %v, want %v", got, want)
	}
}

func equalBools(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
