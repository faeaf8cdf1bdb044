package sqlstore

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// rawMemo keeps the lists a one-pass Total counted, as counts per
// dictionary code, for the Groups and TopGroups calls of the same request
// (see onePass). An entry serves one call, only within
// memoTTL, and only if this process committed no Append since the pass
// began: the Groups calls then see the same rows as the Total, which is
// at least as consistent as six separate queries.
type rawMemo struct {
	mu      sync.Mutex
	gen     uint64 // bumped by every committed Append
	entries map[string]memoEntry
}

type memoEntry struct {
	counts codeCounts
	gen    uint64
	at     time.Time
}

const (
	memoTTL = 5 * time.Second
	// memoMax bounds the entries kept; when full, the expired go first,
	// and if none has expired, all go (a pass is only an optimization).
	memoMax = 256
)

// generation returns the current generation, to be captured before a pass.
func (m *rawMemo) generation() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gen
}

// invalidate forgets every entry; Append calls it after each commit.
func (m *rawMemo) invalidate() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	clear(m.entries)
}

func (m *rawMemo) put(key string, counts codeCounts, gen uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if gen != m.gen {
		return
	}
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
	m.entries[key] = memoEntry{counts: counts, gen: gen, at: now}
}

// take returns and forgets the entry of the key, if it is still valid.
func (m *rawMemo) take(key string) (codeCounts, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[key]
	if !ok {
		return nil, false
	}
	delete(m.entries, key)
	if e.gen != m.gen || time.Since(e.at) > memoTTL {
		return nil, false
	}
	return e.counts, true
}

// memoKey identifies a Groups call: the normalized selection and the
// dimension.
func memoKey(n selection, d analytics.Dimension) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(int(d)))
	b.WriteByte('|')
	b.WriteString(strconv.Quote(n.cat))
	for _, t := range []time.Time{n.rng.Start, n.rng.End} {
		b.WriteByte('|')
		if !t.IsZero() {
			b.WriteString(strconv.FormatInt(t.UnixMicro(), 10))
		}
	}
	for _, dim := range analytics.Dimensions {
		b.WriteByte('|')
		for _, v := range n.filters[dim] {
			b.WriteString(strconv.Quote(v))
			b.WriteByte(',')
		}
	}
	return b.String()
}

// withoutFilter returns the selection without one dimension's filter.
func (n selection) withoutFilter(d analytics.Dimension) selection {
	out := n
	out.filters = make(map[analytics.Dimension][]string, len(n.filters))
	for dim, vals := range n.filters {
		if dim != d {
			out.filters[dim] = vals
		}
	}
	return out
}
