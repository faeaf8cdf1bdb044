package analyticsapi

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// A raw answer with whole question and answer lists holds every group of
// its range with its text from the read of the log to the last byte of
// the response: at 10M interactions, about 340,000 questions and 40 MB
// for a year of the busiest CAT. N such requests at once hold N times
// that, on top of the column index, so they take turns: wholeListTurn lets
// Deps.WholeLists of them in at a time, and the others wait for a turn
// (docs/operations.md, "Memory"). A request with a limit builds only its
// limit's groups and never waits.

// DefaultWholeListWait is how long a request waits for a turn before it
// is answered 503: under serve's write timeout (2 minutes), so that a
// request does not take a turn only to find its response cut off.
const DefaultWholeListWait = time.Minute

// wholeListTurn is the middleware of /all and /all_legacy that makes
// requests with whole lists wait for a turn. One that waits longer than
// s.wholeListWait is answered 503 with Retry-After; one whose client
// goes away while it waits ends with nothing written and status 499 in
// the request log, as huma ends a response its client left.
func (s *routes) wholeListTurn(api huma.API) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		u := ctx.URL()
		if !wantsWholeLists(u.Query()) {
			next(ctx)
			return
		}
		wait := time.NewTimer(s.wholeListWait)
		defer wait.Stop()
		select {
		case s.wholeLists <- struct{}{}:
		case <-ctx.Context().Done():
			ctx.SetStatus(499)
			return
		case <-wait.C:
			ctx.SetHeader("Retry-After", "10")
			_ = huma.WriteErr(api, ctx, http.StatusServiceUnavailable,
				"too many requests for whole question and answer lists at once; retry later, or ask for a limit")
			return
		}
		defer func() { <-s.wholeLists }()
		if ctx.Context().Err() != nil {
			// It ended as its turn came: give the turn on.
			ctx.SetStatus(499)
			return
		}
		next(ctx)
	}
}

// wantsWholeLists reports whether a raw request's question and answer
// lists are whole: no limit (absent or 0), or a page or search (offset or
// q), which is cut from the whole lists. A limit that does not parse is
// not: the request is refused before it is answered.
func wantsWholeLists(v url.Values) bool {
	if v.Has("offset") || v.Has("q") {
		return true
	}
	limit := v.Get("limit")
	if limit == "" {
		return true
	}
	n, err := strconv.Atoi(limit)
	return err == nil && n == 0
}
