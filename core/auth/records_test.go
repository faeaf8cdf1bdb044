package auth_test

import (
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/auth"
)

func TestAuditFilterMatches(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := auth.AuditEvent{Time: at, Kind: auth.AuditLogout, UserID: "u1"}
	cases := []struct {
		name string
		f    auth.AuditFilter
		want bool
	}{
		{"no filter", auth.AuditFilter{}, true},
		{"since equal", auth.AuditFilter{Since: at}, true},
		{"since after", auth.AuditFilter{Since: at.Add(time.Nanosecond)}, false},
		{"user", auth.AuditFilter{UserID: "u1"}, true},
		{"other user", auth.AuditFilter{UserID: "u2"}, false},
		{"limit does not filter", auth.AuditFilter{Limit: 1}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.f.Matches(e); got != c.want {
				t.Fatalf("Matches = %v, want %v", got, c.want)
			}
		})
	}
}

func TestAuditEventStorable(t *testing.T) {
	e := auth.AuditEvent{Kind: auth.AuditLoginStart, UserID: "u\x00", Provider: "p", Cat: "c\xff", IP: "1.2.3.4",
		UserAgent: "agent\x00x\xc3", Reason: "fine ✓"}
	got := e.Storable()
	want := auth.AuditEvent{Kind: auth.AuditLoginStart, UserID: "u\uFFFD", Provider: "p", Cat: "c\uFFFD", IP: "1.2.3.4",
		UserAgent: "agent\uFFFDx\uFFFD", Reason: "fine ✓"}
	if got != want {
		t.Errorf("Storable = %+v\nwant %+v", got, want)
	}
	if clean := want.Storable(); clean != want {
		t.Errorf("Storable changed clean text: %+v", clean)
	}
}
