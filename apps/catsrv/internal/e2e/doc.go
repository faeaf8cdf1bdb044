// Package e2e holds the end-to-end tests of the admin dashboard: the HTTP
// app on demo data in SQLite, driven in headless Chromium with chromedp.
// It has no code of its own.
//
// The tests need a Chromium (CATSRV_CHROMIUM, or chromium, chromium-browser
// or google-chrome on PATH). Without one they skip, except under CI=true,
// where a missing browser fails them; under -short they skip. Screenshots and the downloaded export
// are written to CATSRV_ARTIFACTS when set, else to a temporary directory
// that the test log names.
package e2e
