package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// browserContext starts a headless Chromium with a fresh profile and no
// background traffic (the machine may have no network), with the extra
// options.
func browserContext(t *testing.T, chrome string, extra ...chromedp.ExecAllocatorOption) (context.Context, context.CancelFunc) {
	t.Helper()
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(chrome),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1366, 900),
	)
	opts = append(opts, extra...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	if err := chromedp.Do(ctx); err != nil {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
		t.Fatalf("starting Chromium %s: %v", chrome, err)
	}
	return ctx, func() { cancelTimeout(); cancelCtx(); cancelAlloc() }
}

// run runs browser actions, failing the test with what was being done.
func run(ctx context.Context, t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// shot saves a full-page screenshot.
func shot(ctx context.Context, t *testing.T, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o600); err != nil {
		t.Fatal(err)
	}
}

// viewportShot saves a screenshot of the viewport.
func viewportShot(ctx context.Context, t *testing.T, dir, name string) {
	t.Helper()
	png := value(ctx, t, "screenshot "+name, chromedp.CaptureScreenshot())
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o600); err != nil {
		t.Fatal(err)
	}
}

// value runs an action that returns a value.
func value[T any](ctx context.Context, t *testing.T, what string, action chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, action)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// allowDownloads saves downloads into dir under their suggested names.
func allowDownloads(dir string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior:     browser.SetDownloadBehaviorBehaviorAllow,
			DownloadPath: dir,
		})
		return err
	})
}

// errorMessage returns the message of the API's error body for a request
// with the token.
func errorMessage(t *testing.T, target, token string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	var body struct {
		Message string `json:"message"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || body.Message == "" {
		t.Fatalf("no error message from %s: %v", target, err)
	}
	return body.Message
}
