package e2e_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestAPIDocsOffline: /docs renders the API reference, its operations
// listed, in a Chromium that can reach no host but the server (every
// other name resolves to nothing): the page's script and stylesheet come
// from the binary. No request leaves for another host.
func TestAPIDocsOffline(t *testing.T) {
	chrome := browserPath(t)
	out := artifacts(t)
	s := newSite(t)

	ctx, cancel := browserContext(t, chrome,
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"))
	defer cancel()
	var mu sync.Mutex
	var elsewhere []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && e.Request != nil &&
			!strings.HasPrefix(e.Request.URL, s.url+"/") && !strings.HasPrefix(e.Request.URL, "data:") {
			mu.Lock()
			elsewhere = append(elsewhere, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	run(ctx, t, "watch the requests", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, network.Enable, network.EnableParams{})
		return err
	}))
	run(ctx, t, "open /docs", chromedp.Navigate(s.url+"/docs"))
	// The sidebar lists the operations' tags, then, one opened, its
	// operations by their summaries.
	tags := []string{"analytics", "health", "chat", "conversations", "configuration", "auth"}
	cond := `customElements.get('elements-api') !== undefined && [` + quoteAll(tags) + `].every((t) => [...document.querySelectorAll('div')].some((e) => e.children.length === 0 && e.textContent.trim() === t))`
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(90*time.Second))); err != nil {
		shot(ctx, t, out, "apidocs-offline-failed.png")
		state := value(ctx, t, "read the page", chromedp.Evaluate[string](`(customElements.get('elements-api') !== undefined) + ' ' + document.body.innerText.slice(0, 400)`))
		t.Fatalf("the page did not render: %v; defined, text: %s; other hosts asked: %v", err, state, elsewhere)
	}
	click := func(text string) {
		t.Helper()
		run(ctx, t, "click "+text, chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll('div, a')].
			find((e) => e.children.length === 0 && e.textContent.trim() === '`+text+`').click()`))
	}
	click("analytics")
	operations := []string{"Configured CATs", "Full analytics from the raw log", "Ingest interactions"}
	run(ctx, t, "wait for the analytics operations", chromedp.Poll[chromedp.Void](`[`+quoteAll(operations)+`].every((o) => document.body.innerText.includes(o))`,
		chromedp.WithPollingTimeout(30*time.Second)))
	click("Configured CATs")
	run(ctx, t, "wait for its page", chromedp.Poll[chromedp.Void](`document.body.innerText.includes('A token that does not verify is refused')`,
		chromedp.WithPollingTimeout(30*time.Second)))
	shot(ctx, t, out, "apidocs-offline.png")

	mu.Lock()
	defer mu.Unlock()
	if len(elsewhere) > 0 {
		t.Errorf("the page asked other hosts: %v", elsewhere)
	}
}

// quoteAll writes strings as a JavaScript list's items.
func quoteAll(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
	}
	return strings.Join(q, ", ")
}
