// Package listmemo keeps the lists a one-pass count produced for the calls
// of the same request that ask for them next. A result is asked for as a
// total and then five lists; an adapter that counts all six in one pass
// (the raw path of adapters/sqlstore, the index of adapters/colindex) puts
// the lists here and takes each back once.
//
// An entry serves one call, within the memo's time-to-live, and only in
// the generation it was counted in: the adapter invalidates the memo when
// its rows change, so no list counted before a change is served after it.
// The memo is a shortcut, never the record: when full it drops the expired
// entries, and if none has expired, all of them.
package listmemo

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// Memo holds lists of type V by key. Safe for concurrent use.
type Memo[V any] struct {
	ttl time.Duration
	max int

	mu      sync.Mutex
	gen     uint64
	entries map[string]entry[V]
}

type entry[V any] struct {
	value V
	gen   uint64
	at    time.Time
}

// New returns an empty memo whose entries live ttl and of which it keeps
// at most max.
func New[V any](ttl time.Duration, max int) *Memo[V] {
	return &Memo[V]{ttl: ttl, max: max, entries: map[string]entry[V]{}}
}

// Generation returns the current generation, to be captured before a
// pass and given to Put.
func (m *Memo[V]) Generation() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gen
}

// Invalidate starts a new generation and forgets every entry; call it
// whenever the counted rows change.
func (m *Memo[V]) Invalidate() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	clear(m.entries)
}

// Put keeps the value for one call, unless the generation gen, in which
// it was counted, has ended.
func (m *Memo[V]) Put(key string, value V, gen uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if gen != m.gen {
		return
	}
	now := time.Now()
	if len(m.entries) >= m.max {
		for k, e := range m.entries {
			if now.Sub(e.at) > m.ttl {
				delete(m.entries, k)
			}
		}
		if len(m.entries) >= m.max {
			clear(m.entries)
		}
	}
	m.entries[key] = entry[V]{value: value, gen: gen, at: now}
}

// Take returns and forgets the value kept for the key, if it is still
// valid.
func (m *Memo[V]) Take(key string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var zero V
	e, ok := m.entries[key]
	if !ok {
		return zero, false
	}
	delete(m.entries, key)
	if e.gen != m.gen || time.Since(e.at) > m.ttl {
		return zero, false
	}
	return e.value, true
}

// Values returns the values kept, for tests and diagnostics.
func (m *Memo[V]) Values() []V {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]V, 0, len(m.entries))
	for _, e := range m.entries {
		out = append(out, e.value)
	}
	return out
}

// Key identifies a list call: the dimension, the CAT, the range's bounds
// as the adapter compares them (micros; a zero bound is open) and the
// filter values of every dimension as the adapter normalizes them.
func Key(d analytics.Dimension, cat string, start, end time.Time, micros func(time.Time) int64,
	values func(analytics.Dimension) []string) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(int(d)))
	b.WriteByte('|')
	b.WriteString(strconv.Quote(cat))
	for _, t := range []time.Time{start, end} {
		b.WriteByte('|')
		if !t.IsZero() {
			b.WriteString(strconv.FormatInt(micros(t), 10))
		}
	}
	for _, dim := range analytics.Dimensions {
		b.WriteByte('|')
		for _, v := range values(dim) {
			b.WriteString(strconv.Quote(v))
			b.WriteByte(',')
		}
	}
	return b.String()
}
