package colindex

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// passMemo keeps the passes Total started (see pass.go) for the Groups
// and TopGroups calls of the same request, by the selection and dimension
// of each call. An entry serves one call, within memoTTL, and only while
// the index's generation is the pass's: a refresh that applies rows bumps
// the generation, so no list counted before it is served after it.
type passMemo struct {
	mu      sync.Mutex
	entries map[string]memoEntry
}

type memoEntry struct {
	pass *onePass
	at   time.Time
}

const (
	memoTTL = 5 * time.Second
	// memoMax bounds the entries kept (a pass's question list can be
	// megabytes): when full, the expired go first, and if none has
	// expired, all go (a pass is only a shortcut).
	memoMax = 64
)

// put keeps the pass for the list calls of sel's request.
func (m *passMemo) put(sel analytics.Selection, pass *onePass) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = map[string]memoEntry{}
	}
	now := time.Now()
	if len(m.entries) >= memoMax {
		for k, e := range m.entries {
			if now.Sub(e.at) > memoTTL {
				delete(m.entries, k)
			}
		}
		if len(m.entries) >= memoMax {
			clear(m.entries)
		}
	}
	for d, want := range pass.want {
		if want {
			dim := analytics.Dimension(d)
			list := analytics.Selection{Cat: sel.Cat, Range: sel.Range, Filters: sel.Filters.Without(dim)}
			m.entries[memoKey(list, dim)] = memoEntry{pass: pass, at: now}
		}
	}
}

// take returns and forgets the pass kept for the call, if it is still
// valid in generation gen.
func (m *passMemo) take(sel analytics.Selection, d analytics.Dimension, gen uint64) *onePass {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.entries) == 0 {
		return nil
	}
	key := memoKey(sel, d)
	e, ok := m.entries[key]
	if !ok {
		return nil
	}
	delete(m.entries, key)
	if e.pass.gen != gen || time.Since(e.at) > memoTTL {
		return nil
	}
	return e.pass
}

// forget drops every entry; the index calls it when it bumps the
// generation, so that stale lists do not wait for their TTL.
func (m *passMemo) forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.entries)
}

// memoKey identifies a list call: the dimension and the selection as the
// index resolves it (times in whole microseconds, see ceilMicros).
func memoKey(sel analytics.Selection, d analytics.Dimension) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(int(d)))
	b.WriteByte('|')
	b.WriteString(strconv.Quote(sel.Cat))
	for _, t := range []time.Time{sel.Range.Start, sel.Range.End} {
		b.WriteByte('|')
		if !t.IsZero() {
			b.WriteString(strconv.FormatInt(ceilMicros(t), 10))
		}
	}
	for _, dim := range analytics.Dimensions {
		b.WriteByte('|')
		for _, v := range sel.Filters.Values(dim) {
			b.WriteString(strconv.Quote(v))
			b.WriteByte(',')
		}
	}
	return b.String()
}
