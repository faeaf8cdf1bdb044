package authapi

import (
	"container/list"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"golang.org/x/time/rate"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// Defaults of RateLimit (docs/auth.md, "Rate limits").
const (
	// DefaultAuthRate is the sustained number of limited auth requests
	// one client address may send per second.
	DefaultAuthRate = 1.0
	// DefaultAuthBurst is how many it may send at once.
	DefaultAuthBurst = 20
	// DefaultRateLimitClients bounds how many client addresses the
	// limiter remembers.
	DefaultRateLimitClients = 16384
	// DefaultRateLimitAuditWindow is how often at most the refusals of one
	// address are audited.
	DefaultRateLimitAuditWindow = time.Minute
)

// RateLimit is the per-client-address token bucket in front of the auth
// routes an anonymous client can reach and that write the audit log or
// call a provider: the login start, the callback, refresh and logout. The
// address is the connection's peer (X-Forwarded-For is not trusted), an
// IPv6 address counted by its /64. The zero value is the defaults.
type RateLimit struct {
	// Disabled turns the limit off.
	Disabled bool
	// PerSecond is the rate at which an address's bucket refills
	// (default DefaultAuthRate).
	PerSecond float64
	// Burst is the size of the bucket (default DefaultAuthBurst).
	Burst int
	// MaxClients bounds the addresses remembered (default
	// DefaultRateLimitClients): past it, the least recently seen is
	// forgotten. Idle addresses, whose bucket is full again, are forgotten
	// anyway.
	MaxClients int
	// AuditWindow: an address's refusals are audited (kind rate_limited)
	// at the first one, then at most once per window (default
	// DefaultRateLimitAuditWindow).
	AuditWindow time.Duration
	// Clock tells the time; nil is the system clock.
	Clock ports.Clock
}

// withDefaults fills the zero fields.
func (c RateLimit) withDefaults() RateLimit {
	if c.PerSecond <= 0 {
		c.PerSecond = DefaultAuthRate
	}
	if c.Burst <= 0 {
		c.Burst = DefaultAuthBurst
	}
	if c.MaxClients <= 0 {
		c.MaxClients = DefaultRateLimitClients
	}
	if c.AuditWindow <= 0 {
		c.AuditWindow = DefaultRateLimitAuditWindow
	}
	if c.Clock == nil {
		c.Clock = clock.System{}
	}
	return c
}

// clientLimiter holds one token bucket per client address, most recently
// seen first, at most MaxClients of them. Safe for concurrent use.
type clientLimiter struct {
	cfg RateLimit
	// idle is how long an address must stay away for its entry to be
	// worth nothing: its bucket full again and its audit window over.
	idle time.Duration

	mu      sync.Mutex
	recent  *list.List // of *clientEntry, front = last seen
	clients map[string]*list.Element
}

type clientEntry struct {
	key     string
	bucket  *rate.Limiter
	seen    time.Time
	audited time.Time // of the last audited refusal; zero: none
}

func newClientLimiter(c RateLimit) *clientLimiter {
	c = c.withDefaults()
	refill := time.Duration(float64(c.Burst) / c.PerSecond * float64(time.Second))
	return &clientLimiter{cfg: c, idle: max(refill, c.AuditWindow), recent: list.New(), clients: map[string]*list.Element{}}
}

// admit takes a token of key's bucket. It returns 0 when the request may
// go on; otherwise how long to wait before the next one would be
// admitted, and whether this refusal is the one of its window to audit.
func (l *clientLimiter) admit(key string) (wait time.Duration, audit bool) {
	now := l.cfg.Clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forgetIdle(now)
	var e *clientEntry
	if el, ok := l.clients[key]; ok {
		l.recent.MoveToFront(el)
		e = el.Value.(*clientEntry)
	} else {
		for l.recent.Len() >= l.cfg.MaxClients {
			l.forget(l.recent.Back())
		}
		e = &clientEntry{key: key, bucket: rate.NewLimiter(rate.Limit(l.cfg.PerSecond), l.cfg.Burst)}
		l.clients[key] = l.recent.PushFront(e)
	}
	e.seen = now
	r := e.bucket.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		// Refused: give the token back, so waiting clients are not
		// punished for asking.
		r.CancelAt(now)
		if e.audited.IsZero() || now.Sub(e.audited) >= l.cfg.AuditWindow {
			e.audited, audit = now, true
		}
		return d, audit
	}
	return 0, false
}

// forgetIdle drops the addresses not seen for l.idle, oldest first.
func (l *clientLimiter) forgetIdle(now time.Time) {
	for el := l.recent.Back(); el != nil && now.Sub(el.Value.(*clientEntry).seen) >= l.idle; el = l.recent.Back() {
		l.forget(el)
	}
}

func (l *clientLimiter) forget(el *list.Element) {
	delete(l.clients, el.Value.(*clientEntry).key)
	l.recent.Remove(el)
}

// size is how many addresses are remembered.
func (l *clientLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.recent.Len()
}

// clientKey is the address a request is counted under: the connection's
// peer IP, an IPv6 address by its /64 (one host usually has a whole /64),
// an IPv4-mapped IPv6 address as the IPv4 one.
func clientKey(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.WithZone("").Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// retryAfter is a wait in whole seconds, at least 1 (the Retry-After
// header has no smaller unit).
func retryAfter(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// limited is the middleware that answers 429 with Retry-After to a client
// address over its rate, auditing the refusal once per window, and passes
// other requests on.
func (a *authAPI) limited(ctx huma.Context, next func(huma.Context)) {
	if a.limiter == nil {
		next(ctx)
		return
	}
	r, w := humago.Unwrap(ctx)
	key := clientKey(r.RemoteAddr)
	wait, audit := a.limiter.admit(key)
	if wait == 0 {
		next(ctx)
		return
	}
	secs := retryAfter(wait)
	if audit {
		m, c := meta(r), a.limiter.cfg
		reason := fmt.Sprintf("%s %s: more than %d requests at once or %g per second from %s; refused for %s, further refusals within %s not audited",
			r.Method, r.URL.Path, c.Burst, c.PerSecond, key, time.Duration(secs)*time.Second, c.AuditWindow)
		if err := a.d.Sessions.Audit(ctx.Context(), auth.AuditEvent{Kind: auth.AuditRateLimited, IP: m.IP, UserAgent: m.UserAgent, Reason: reason}); err != nil {
			// The refusal stands; only its record is lost.
			a.log.LogAttrs(ctx.Context(), slog.LevelError, "cannot audit a rate-limit refusal", slog.String("client", key), slog.String("error", err.Error()))
		}
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	a.fail(w, r, errs.New(errs.KindRateLimited, "too many authentication requests from this address: retry in %d s", secs))
}
