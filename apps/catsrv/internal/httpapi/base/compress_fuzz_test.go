package base_test

import (
	"strings"
	"testing"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi/base"
)

// FuzzAcceptsGzip: any Accept-Encoding header parses without a panic; a
// header that names neither gzip nor * never allows gzip, and one that is
// exactly a coding list of gzip alone always does.
func FuzzAcceptsGzip(f *testing.F) {
	for _, s := range []string{"", "gzip", "gzip;q=0", "br, gzip;q=0.5", "*;q=0", "x-gzip", "gzip;q=abc", ";;,,", "identity"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		got := base.AcceptsGzip(header)
		lower := strings.ToLower(header)
		if got && !strings.Contains(lower, "gzip") && !strings.Contains(lower, "*") {
			t.Errorf("AcceptsGzip(%q) = true without gzip or *", header)
		}
		if !strings.ContainsAny(header, ";,") && strings.EqualFold(strings.TrimSpace(header), "gzip") && !got {
			t.Errorf("AcceptsGzip(%q) = false", header)
		}
	})
}
