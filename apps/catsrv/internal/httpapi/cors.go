package httpapi

import (
	"net/http"
	"net/url"
	"strings"
)

// corsMaxAge is how long a browser may cache a preflight answer, seconds.
const corsMaxAge = "600"

// normalizeOrigin returns an origin as browsers send it
// (scheme://host[:port], lower case, no default port, no path), and false
// for anything that is not an http(s) origin. "*" is never an origin.
func normalizeOrigin(o string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	host := strings.ToLower(u.Host)
	if (u.Scheme == "https" && strings.HasSuffix(host, ":443")) || (u.Scheme == "http" && strings.HasSuffix(host, ":80")) {
		host = host[:strings.LastIndexByte(host, ':')]
	}
	return strings.ToLower(u.Scheme) + "://" + host, true
}

// withCORS applies the CORS allowlist to every route. A listed origin gets
// its own name back with credentials allowed; any other origin gets no
// CORS header at all (the browser then withholds the answer), and its
// preflights are refused with 403. There is no wildcard.
func withCORS(origins map[string]bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		n, ok := normalizeOrigin(origin)
		allowed := ok && origins[n]
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		if preflight {
			h.Add("Vary", "Access-Control-Request-Method")
			h.Add("Vary", "Access-Control-Request-Headers")
			if !allowed {
				writeJSON(w, http.StatusForbidden, ErrorBody{Code: "FORBIDDEN", Status: http.StatusForbidden,
					Message: "CORS: origin " + truncateOrigin(origin) + " is not allowed"})
				return
			}
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			h.Set("Access-Control-Max-Age", corsMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if allowed {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
		}
		next.ServeHTTP(w, r)
	})
}
