package oauth

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/catsrv/catsrv/core/errs"
)

// rewriter points a provider's fixed endpoint hosts at a configured base
// URL. It is the RoundTripper of the provider's HTTP client and rewrites
// the authorization URL given to the browser. With no base it changes
// nothing.
type rewriter struct {
	base  *url.URL
	hosts map[string]bool
	next  http.RoundTripper
}

func newRewriter(base string, hosts ...string) (*rewriter, error) {
	rw := &rewriter{hosts: map[string]bool{}, next: http.DefaultTransport}
	for _, h := range hosts {
		rw.hosts[h] = true
	}
	if base == "" {
		return rw, nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return nil, errs.New(errs.KindInvalid, "base URL %q: want http(s)://host[:port][/path]", base)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	rw.base = u
	return rw, nil
}

// rewritten returns u moved onto the base when its host is one of the
// provider's.
func (rw *rewriter) rewritten(u *url.URL) *url.URL {
	if rw.base == nil || !rw.hosts[u.Host] {
		return u
	}
	out := *u
	out.Scheme, out.Host = rw.base.Scheme, rw.base.Host
	out.Path = rw.base.Path + u.Path
	out.RawPath = ""
	return &out
}

// url rewrites a URL given as text.
func (rw *rewriter) url(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", errs.Wrap(errs.KindInternal, err, "provider built an invalid URL")
	}
	return rw.rewritten(u).String(), nil
}

// RoundTrip sends the request to the rewritten URL.
func (rw *rewriter) RoundTrip(r *http.Request) (*http.Response, error) {
	u := rw.rewritten(r.URL)
	if u == r.URL {
		return rw.next.RoundTrip(r)
	}
	clone := r.Clone(r.Context())
	clone.URL = u
	clone.Host = u.Host
	return rw.next.RoundTrip(clone)
}
