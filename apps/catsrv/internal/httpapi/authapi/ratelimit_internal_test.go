package authapi

import (
	"fmt"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/clock"
)

func TestClientKey(t *testing.T) {
	cases := []struct{ remote, want string }{
		{"192.0.2.7:51234", "192.0.2.7"},
		{"[::ffff:192.0.2.7]:51234", "192.0.2.7"},
		{"[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2::1]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:3::1]:443", "2001:db8:1:3::/64"},
		{"[fe80::1%eth0]:443", "fe80::/64"},
		{"not an address", "not an address"},
	}
	for _, c := range cases {
		if got := clientKey(c.remote); got != c.want {
			t.Errorf("clientKey(%q) = %q, want %q", c.remote, got, c.want)
		}
	}
}

// The limiter remembers at most MaxClients addresses, forgetting the
// least recently seen, and forgets idle ones on its own.
func TestClientLimiterIsBounded(t *testing.T) {
	clk := clock.NewFixed(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := newClientLimiter(RateLimit{PerSecond: 1, Burst: 2, MaxClients: 100, AuditWindow: time.Minute, Clock: clk})
	for i := range 1000 {
		if wait, _ := l.admit(fmt.Sprintf("10.0.%d.%d", i/256, i%256)); wait != 0 {
			t.Fatalf("a new address was refused (%s)", wait)
		}
		if n := l.size(); n > 100 {
			t.Fatalf("%d addresses remembered, cap 100", n)
		}
	}
	// The most recent address is remembered: its bucket has one token
	// left, then it is refused.
	last := "10.0.3.231"
	if wait, _ := l.admit(last); wait != 0 {
		t.Fatal("second request of a burst of 2 refused")
	}
	if wait, audit := l.admit(last); wait != time.Second || !audit {
		t.Fatalf("third request: wait %s audit %v, want 1s and the audit", wait, audit)
	}
	if wait, audit := l.admit(last); wait != time.Second || audit {
		t.Fatalf("fourth request: wait %s audit %v, want 1s and no audit", wait, audit)
	}
	// Idle past both the refill (2 s) and the audit window (1 min): every
	// address is forgotten at the next request.
	clk.Advance(time.Minute)
	l.admit("192.0.2.1")
	if n := l.size(); n != 1 {
		t.Fatalf("%d addresses remembered after a minute idle, want 1", n)
	}
}
