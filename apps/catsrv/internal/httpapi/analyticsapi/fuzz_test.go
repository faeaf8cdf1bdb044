package analyticsapi_test

import (
	"net/http"
	"strings"
	"testing"

	. "github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/internal/apitest"
)

// The fuzz targets of the HTTP app (make fuzz; README.md, Fuzz tests). Each
// drives the real app over a real SQLite database (and, when the seed
// corpus runs as ordinary tests with CATSRV_TEST_POSTGRES_DSN set, over
// PostgreSQL too) and holds the same property: no answer is a server
// failure (see serverFault), nothing panics, nothing is logged at ERROR.
// Their seed corpora are the f.Add calls below and testdata/fuzz/<name>/.

// fuzzAnalyticsRoutes are the read routes under /api/v1/analytics.
var fuzzAnalyticsRoutes = append(append([]string{}, AnalyticsRoutes...),
	"/interactions", "/interactions/export", "/daily_counts", "/get_cats")

// FuzzAnalyticsQuery sends any raw query string to the analytics routes,
// as an admin: filters, dates, limits, cursors and formats in any bytes.
func FuzzAnalyticsQuery(f *testing.F) {
	for i, q := range []string{
		"catname=private", "catname=private&topic=billing&model=gpt-a", "catname=abc%00x", "catname=%FF",
		"catname=private&topic=%00&model=%FF&persona=%C3", "catname=private&questionid=%00&answerid=a%80",
		"catname=private&startDate=2024-01-01&endDate=2024-02-01", "catname=private&startDate=%00",
		"catname=private&endDate=2024-13-45", "catname=private&startDate=2024-03-01&endDate=2024-01-01",
		"catname=private&limit=-1", "catname=private&limit=99999999999999999999", "catname=private&cursor=%00",
		"catname=private&cursor=MTcxMDQ5MzIwMDAwMDAwMDAwMDox&limit=1", "catname=private&format=jsonl&limit=2",
		"catname=private&format=%00", "catname=private&topic=a;b&topic=%", "catname=private&catname=public",
		"", "%", "&&&=", "catname", "catname=private&topic=" + strings.Repeat("x", 300),
	} {
		f.Add(uint8(i), q)
	}
	envs := FuzzEnvs(f)
	f.Fuzz(func(t *testing.T, route uint8, query string) {
		target := AnalyticsPrefix + fuzzAnalyticsRoutes[int(route)%len(fuzzAnalyticsRoutes)] + "?" + query
		for _, e := range envs {
			e.CheckFuzz(t, "GET "+target, e.Do(t, http.MethodGet, target, e.Admin, ""))
		}
	})
}
