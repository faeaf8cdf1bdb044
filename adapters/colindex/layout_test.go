package colindex

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// TestCodeColumn inserts codes at random places and checks the column
// against a plain slice, through each widening.
func TestCodeColumn(t *testing.T) {
	tests := []struct {
		name      string
		maxCode   uint32
		wantWidth int
	}{
		{"one byte", 0xff, 1},
		{"just over one byte", 0x100, 2},
		{"two bytes", 0xffff, 2},
		{"just over two bytes", 0x10000, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tt.maxCode)))
			col, want := newCodeColumn(), []uint32{}
			for k := range 3000 {
				code := r.Uint32N(min(tt.maxCode, 200)) // small codes first
				if k == 2000 {
					code = tt.maxCode
				}
				at := r.IntN(len(want) + 1)
				col.insert(at, code)
				want = slices.Insert(want, at, code)
			}
			if col.width != tt.wantWidth {
				t.Errorf("width = %d, want %d", col.width, tt.wantWidth)
			}
			checkColumn(t, &col, want)
			perm := make([]int32, len(want))
			for k := range perm {
				perm[k] = int32(len(want) - 1 - k)
			}
			col.permute(perm)
			col.trim()
			slices.Reverse(want)
			checkColumn(t, &col, want)
		})
	}
}

func checkColumn(t *testing.T, col *codeColumn, want []uint32) {
	t.Helper()
	if col.len() != len(want) {
		t.Fatalf("len = %d, want %d", col.len(), len(want))
	}
	var buf [blockRows]uint32
	if got := col.decode(buf[:], 0, len(want)); !slices.Equal(got, want) {
		t.Errorf("decode differs from the inserted codes")
	}
	for k, code := range want {
		if got := col.get(k); got != code {
			t.Fatalf("get(%d) = %d, want %d", k, got, code)
		}
	}
	// countBlock counts the odd rows per code, as a filter would pass them.
	counts := make([]int64, slices.Max(want)+1)
	ref := make([]int64, len(counts))
	pass := make([]uint8, len(want))
	for k := range pass {
		pass[k] = uint8(k % 2)
		ref[want[k]] += int64(k % 2)
	}
	countBlock(counts, pass, col, 0, len(want))
	if !slices.Equal(counts, ref) {
		t.Errorf("countBlock's counts differ from the reference")
	}
}

// TestTimeColumn inserts times, in order and not, and checks the column
// against a plain slice: the times, and in order, search.
func TestTimeColumn(t *testing.T) {
	const hour = int64(3_600_000_000)
	tests := []struct {
		name   string
		sorted bool
		spread int64 // times are drawn from [-spread, spread)
	}{
		{"in order, within one run", true, hour / 4},
		{"in order, over months", true, 2000 * hour},
		{"in order, around the epoch", true, 20 * hour},
		{"out of order, over months", false, 2000 * hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(2, uint64(tt.spread)))
			base := int64(1_735_689_600_000_000)
			if tt.name == "in order, around the epoch" {
				base = 0
			}
			var col timeColumn
			var want []int64
			for range 5000 {
				m := base + r.Int64N(2*tt.spread) - tt.spread
				at := r.IntN(len(want) + 1)
				if tt.sorted {
					at = sort.Search(len(want), func(k int) bool { return want[k] > m })
				}
				col.insert(at, m)
				want = slices.Insert(want, at, m)
			}
			col.trim()
			if got := col.all(); !slices.Equal(got, want) {
				t.Fatalf("times differ from the inserted ones")
			}
			buf := make([]int64, blockRows)
			if got := col.decode(buf, 100, 2100); !slices.Equal(got, want[100:2100]) {
				t.Errorf("decode(100, 2100) differs")
			}
			if col.last() != want[len(want)-1] {
				t.Errorf("last = %d, want %d", col.last(), want[len(want)-1])
			}
			if !tt.sorted {
				return
			}
			for _, m := range append(slices.Clone(want[:50]), base-tt.spread-1, base+tt.spread, want[0]+1, base) {
				if got, ref := col.search(m), sort.Search(len(want), func(k int) bool { return want[k] >= m }); got != ref {
					t.Errorf("search(%d) = %d, want %d", m, got, ref)
				}
			}
		})
	}
}

// TestPostingLists inserts rows and shifts positions at random and checks
// each code's list against a plain one, then rebuilds the lists.
func TestPostingLists(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var p postingLists
	col := newCodeColumn()
	var want [][]int32
	for range 2000 {
		code := uint32(r.IntN(len(want) + 1))
		n := r.IntN(col.len() + 1)
		for c := range want {
			p.shift(uint32(c), n)
			for i := range want[c] {
				if want[c][i] >= int32(n) {
					want[c][i]++
				}
			}
		}
		col.insert(n, code)
		p.insert(code, n)
		if int(code) == len(want) {
			want = append(want, nil)
		}
		at := sort.Search(len(want[code]), func(i int) bool { return want[code][i] >= int32(n) })
		want[code] = slices.Insert(want[code], at, int32(n))
	}
	check := func(step string) {
		for c, l := range want {
			if got := p.list(uint32(c)); !slices.Equal(got, l) {
				t.Fatalf("%s: code %d: list %v, want %v", step, c, got, l)
			}
		}
	}
	check("inserted")
	p.trim()
	check("trimmed")
	rows := make([]int64, len(want))
	for c, l := range want {
		rows[c] = int64(len(l))
	}
	p.rebuild(rows, &col)
	check("rebuilt")
}

// TestDictionary codes pairs, some sharing a key, enough to grow the hash
// table many times, and reads them back.
func TestDictionary(t *testing.T) {
	d := newDictionary()
	type pair struct{ key, text string }
	var pairs []pair
	for k := range 20000 {
		p := pair{fmt.Sprintf("q-%d", k), fmt.Sprintf("question %d", k)}
		switch k % 1000 {
		case 1:
			p.text = "" // an empty text
		case 2:
			p.key = "q-1" // a key with several texts
		case 3:
			p.text = p.key
		}
		pairs = append(pairs, p)
	}
	pairs = append(pairs, pair{string(make([]byte, chunkBytes+1)), "a pair longer than a chunk"})
	codes := map[pair]uint32{}
	for round := range 2 {
		for _, p := range pairs {
			c := d.code([]byte(p.key), []byte(p.text))
			if want, ok := codes[p]; ok && c != want {
				t.Fatalf("round %d: %q/%q coded %d, before %d", round, p.key, p.text, c, want)
			}
			codes[p] = c
		}
	}
	if d.len() != len(codes) {
		t.Errorf("len = %d, want %d distinct pairs", d.len(), len(codes))
	}
	byKey := map[string][]uint32{}
	for p, c := range codes {
		if d.key(c) != p.key || d.text(c) != p.text {
			t.Errorf("code %d reads %q/%q, want %q/%q", c, d.key(c), d.text(c), p.key, p.text)
		}
		byKey[p.key] = append(byKey[p.key], c)
	}
	for key, want := range byKey {
		got := slices.Sorted(d.codesOf(key))
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("codesOf(%q) = %v, want %v", key, got, want)
		}
	}
	if got := slices.Collect(d.codesOf("no such key")); len(got) != 0 {
		t.Errorf("codesOf(an unknown key) = %v", got)
	}
}

// TestDictDraft codes pairs into a dictionary in rounds, each through a
// draft merged at its end (as a refresh of a CAT readers use does), and
// holds it to a dictionary that coded the same pairs directly: the same
// codes, readable keys and texts (those written into the spare capacity
// of the last chunk too), the same codes for every key, the hash table
// grown across merges. Some rounds code new texts of old keys, repeat
// pairs within the round, or add nothing new.
func TestDictDraft(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	drafted, direct := newDictionary(), newDictionary()
	type pair struct{ key, text string }
	codes := map[pair]uint32{}
	for round, size := range []int{1, 3, 0, 500, 7, 20000, 1, 3000} {
		dd := newDictDraft(&drafted)
		var round1 []pair
		for k := range size {
			n := r.IntN(2 * (len(codes) + size))
			p := pair{fmt.Sprintf("q-%d", n), fmt.Sprintf("question %d", n)}
			switch r.IntN(10) {
			case 0:
				p.text = fmt.Sprintf("another text %d of round %d", k, round) // an old or new key, a new text
			case 1:
				p.text = p.key
			}
			round1 = append(round1, p)
		}
		if size == 0 {
			round1 = append(round1, pair{"q-0", "question 0"}) // nothing new
		}
		for _, p := range round1 {
			c := dd.code([]byte(p.key), []byte(p.text))
			if want := direct.code([]byte(p.key), []byte(p.text)); c != want {
				t.Fatalf("round %d: draft coded %q/%q %d, want %d", round, p.key, p.text, c, want)
			}
			codes[p] = c
		}
		if drafted.len() != int(dd.base) {
			t.Fatalf("round %d: the draft changed the dictionary before merge", round)
		}
		dd.prepare()
		dd.merge()
		if drafted.len() != direct.len() {
			t.Fatalf("round %d: %d pairs after merge, want %d", round, drafted.len(), direct.len())
		}
	}
	byKey := map[string][]uint32{}
	for p, c := range codes {
		if drafted.key(c) != p.key || drafted.text(c) != p.text {
			t.Errorf("code %d reads %q/%q, want %q/%q", c, drafted.key(c), drafted.text(c), p.key, p.text)
		}
		if got := drafted.code([]byte(p.key), []byte(p.text)); got != c {
			t.Errorf("after the merges %q/%q codes %d, want %d", p.key, p.text, got, c)
		}
		byKey[p.key] = append(byKey[p.key], c)
	}
	for key, want := range byKey {
		got := slices.Sorted(drafted.codesOf(key))
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("codesOf(%q) = %v, want %v", key, got, want)
		}
	}
	if len(drafted.chunks) != len(direct.chunks) {
		// A draft that began a chunk of its own each time would waste
		// most of one per refresh (per chat turn).
		t.Errorf("%d chunks, want the %d of direct coding", len(drafted.chunks), len(direct.chunks))
	}
	if drafted.len() != len(codes) {
		t.Errorf("len = %d, want %d distinct pairs", drafted.len(), len(codes))
	}
}

// TestSortedGroupsBetweenMerges checks that groups come in the same order
// while some entries wait to be ranked (after a refresh applied them,
// before it ranks them) as after.
func TestSortedGroupsBetweenMerges(t *testing.T) {
	d := newDictionary()
	for k := range 100 {
		d.code(fmt.Appendf(nil, "q-%d", k), fmt.Appendf(nil, "text %d", 100-k))
	}
	d.updateRanks()
	for k := range 5 {
		d.code(fmt.Appendf(nil, "q-new-%d", k), fmt.Appendf(nil, "text %d", 3*k))
	}
	if d.ranked != 100 {
		t.Fatalf("ranked %d entries, want 100 until the new ones are ranked", d.ranked)
	}
	counts := make([]int64, d.len())
	nonzero := 0
	for c := range counts {
		counts[c] = int64(c%4) + int64(c/50)*2000 // ties, and counts above bucketMax
		if counts[c] > 0 {
			nonzero++
		}
	}
	for _, limit := range []int{0, 7} {
		waiting := d.sortedGroups(counts, limit)
		ranked := d
		ranked.rank = nil // not to share d's storage
		ranked.updateRanks()
		if want := ranked.sortedGroups(counts, limit); !slices.Equal(waiting, want) {
			t.Errorf("limit %d: groups before the merge\n %v\nafter\n %v", limit, waiting, want)
		}
		if limit == 0 && len(waiting) != nonzero {
			t.Errorf("%d groups, want %d", len(waiting), nonzero)
		}
	}
}

// TestMergedOrder holds the merge of a sorted prefix with the sorted
// rest to the stable sort of all the times, ties between the two parts
// included.
func TestMergedOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, c := range []struct{ n, sorted int }{{0, 0}, {1, 1}, {10, 0}, {10, 10}, {1000, 600}, {1000, 1}, {1000, 999}} {
		times := make([]int64, c.n)
		for k := range times {
			times[k] = r.Int64N(50)
		}
		slices.Sort(times[:c.sorted])
		want := make([]int32, c.n)
		for k := range want {
			want[k] = int32(k)
		}
		slices.SortStableFunc(want, func(a, b int32) int { return cmp.Compare(times[a], times[b]) })
		if got := mergedOrder(times, c.sorted); !slices.Equal(got, want) {
			t.Errorf("%d times, %d sorted: order %v, want %v", c.n, c.sorted, got, want)
		}
	}
}

// TestFirstAtLeast compares the guessed search of a posting list with
// sort.Search, for lists spread evenly, bunched and of every length up
// to a few, at every position around theirs.
func TestFirstAtLeast(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for round := range 300 {
		n := round % 7
		if round >= 100 {
			n = r.IntN(3000)
		}
		l := make([]int32, 0, n)
		at := int32(r.IntN(10))
		for range n {
			if round%3 == 0 && r.IntN(50) == 0 {
				at += int32(r.IntN(10_000)) // a bunch far from the others
			}
			at += int32(1 + r.IntN(20))
			l = append(l, at)
		}
		for pos := int32(-2); pos <= at+3; pos += int32(1 + r.IntN(3)) {
			want := sort.Search(len(l), func(i int) bool { return l[i] >= pos })
			if got := firstAtLeast(l, pos); got != want {
				t.Fatalf("list of %d, pos %d: %d, want %d", len(l), pos, got, want)
			}
		}
	}
}
