package porttest

import (
	"context"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// Erasable is a store under the contract of ports.InteractionEraser.
type Erasable struct {
	Log    ports.InteractionLog
	Eraser ports.InteractionEraser
	// Reads are every path that must answer as the reference over the
	// rows that remain (the raw log, the rollups, a column index), by
	// name.
	Reads map[string]ports.Aggregator
	// Sync, when set, brings the followers among the reads (an index) up
	// to the log's committed state before they are compared.
	Sync func(ctx context.Context) error
	// OnBatch installs fn to run after each batch DeleteInteractions
	// commits, before the next: the suite checks every read there.
	OnBatch func(fn func())
	// DefaultBatch is the batch size of a deletion that names none.
	DefaultBatch int
	// Browser, when set, is the store's chat log: its daily counts and
	// its listing must leave out the deleted rows too.
	Browser ports.InteractionBrowser
}

// TestInteractionEraser runs the contract of ports.InteractionEraser
// against the store open creates. A deletion removes the selected rows in
// append order, batch by batch, so the reference after k batches is the
// log without the first k*batch selected rows; every read must equal it
// after every batch, and the column index (Sync) too.
func TestInteractionEraser(t *testing.T, open func(t *testing.T) Erasable) {
	t.Run("InvalidDeletion", func(t *testing.T) { testEraseInvalid(t, open(t)) })
	t.Run("Selected", func(t *testing.T) { testEraseSelected(t, open(t)) })
	t.Run("Property", func(t *testing.T) { testEraseProperty(t, open) })
}

// eraseHarness pairs an erasable store with the reference.
type eraseHarness struct {
	t   *testing.T
	e   Erasable
	ref []analytics.Interaction
	r   *rand.Rand
	// pending is the deletion in progress and its batch size: OnBatch
	// applies it to ref one batch at a time.
	pending *analytics.Deletion
	batch   int
	batches int
}

func newEraseHarness(t *testing.T, e Erasable, seed uint64) *eraseHarness {
	h := &eraseHarness{t: t, e: e, r: rand.New(rand.NewPCG(seed, seed^0x5bd1e995))}
	if e.OnBatch != nil {
		e.OnBatch(h.afterBatch)
	}
	return h
}

func (h *eraseHarness) append(in ...analytics.Interaction) {
	h.t.Helper()
	n, err := h.e.Log.Append(h.t.Context(), analytics.Each(in))
	if err != nil || n != len(in) {
		h.t.Fatalf("Append: %d, %v; want %d", n, err, len(in))
	}
	for _, i := range in {
		h.ref = append(h.ref, i.Normalize())
	}
}

// removeFromRef removes the first (at most) limit interactions d selects
// from the reference and returns how many.
func (h *eraseHarness) removeFromRef(d analytics.Deletion, limit int) int {
	n := 0
	h.ref = slices.DeleteFunc(h.ref, func(i analytics.Interaction) bool {
		if (limit <= 0 || n < limit) && d.Selects(i) {
			n++
			return true
		}
		return false
	})
	return n
}

// afterBatch runs after each committed batch: the reference loses the
// batch's rows and every read must agree with it.
func (h *eraseHarness) afterBatch() {
	if h.pending == nil {
		h.t.Error("a deletion batch outside DeleteInteractions")
		return
	}
	h.batches++
	if n := h.removeFromRef(*h.pending, h.batch); n == 0 {
		h.t.Errorf("batch %d deleted rows the reference no longer holds", h.batches)
	}
	h.check("after batch " + strconv.Itoa(h.batches))
}

// erase runs a deletion on the store and the reference and checks the
// count, the batches and every read.
func (h *eraseHarness) erase(d analytics.Deletion, batch int) {
	h.t.Helper()
	selected := 0
	for _, i := range h.ref {
		if d.Selects(i) {
			selected++
		}
	}
	h.pending, h.batch, h.batches = &d, batch, 0
	if batch <= 0 {
		h.batch = h.e.DefaultBatch
	}
	n, err := h.e.Eraser.DeleteInteractions(h.t.Context(), d, batch)
	h.pending = nil
	if err != nil {
		h.t.Fatalf("DeleteInteractions(%+v, %d): %v", d, batch, err)
	}
	if n != selected {
		h.t.Errorf("DeleteInteractions(%+v, %d) = %d, reference selects %d", d, batch, n, selected)
	}
	if h.e.OnBatch == nil {
		h.removeFromRef(d, 0)
	} else if want := (selected + h.batch - 1) / h.batch; h.batches != want {
		h.t.Errorf("DeleteInteractions(%+v, %d): %d batches, want %d", d, batch, h.batches, want)
	}
	if left := h.removeFromRef(d, 0); left != 0 {
		h.t.Errorf("DeleteInteractions(%+v, %d) left %d selected rows", d, batch, left)
	}
	h.check("after the deletion")
}

// check compares every read with the reference: both CATs whole, and a
// few random queries.
func (h *eraseHarness) check(when string) {
	h.t.Helper()
	if h.e.Sync != nil {
		if err := h.e.Sync(h.t.Context()); err != nil {
			h.t.Fatalf("%s: Sync: %v", when, err)
		}
	}
	g := newGenerator(h.r)
	queries := []analytics.Query{{Cat: catAlpha}, {Cat: catBeta}}
	for range 3 {
		queries = append(queries, g.query(h.ref))
	}
	if h.e.Browser != nil {
		h.checkBrowser(when)
	}
	names := make([]string, 0, len(h.e.Reads))
	for name := range h.e.Reads {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		read := h.e.Reads[name]
		for _, q := range queries {
			got, err := read.Answer(h.t.Context(), q, analytics.AllParts)
			if err != nil {
				h.t.Fatalf("%s: %s: Answer(%+v): %v", when, name, q, err)
			}
			hh := &harness{t: h.t, read: read, ref: h.ref}
			before := h.t.Failed()
			hh.compare(q, analytics.AllParts, got, analytics.CountAnswer(h.ref, q, analytics.AllParts))
			if !before && h.t.Failed() {
				h.t.Fatalf("%s: %s differs from the reference", when, name)
			}
		}
	}
}

func testEraseInvalid(t *testing.T, e Erasable) {
	h := newEraseHarness(t, e, 1)
	h.append(mixedLog()...)
	for _, d := range []analytics.Deletion{{}, {Cat: catAlpha}} {
		n, err := e.Eraser.DeleteInteractions(t.Context(), d, 0)
		if errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("DeleteInteractions(%+v) = %d, %v; want an invalid error", d, n, err)
		}
		if n != 0 {
			t.Errorf("DeleteInteractions(%+v) deleted %d", d, n)
		}
	}
	h.check("after invalid deletions")
}

// testEraseSelected deletes by time, by user and by both, across CATs and
// event kinds, with the default batch and with batches of one.
func testEraseSelected(t *testing.T, e Erasable) {
	h := newEraseHarness(t, e, 2)
	log := mixedLog()
	for k := range log {
		if k%3 == 0 {
			log[k].UserID = "user-2"
		}
		other := log[k]
		other.Cat = catBeta
		log = append(log, other)
	}
	h.append(log...)
	h.erase(analytics.Deletion{Cat: catAlpha, Before: day(1).Add(2 * time.Hour)}, 0)
	h.erase(analytics.Deletion{Cat: catAlpha, Before: day(1).Add(2 * time.Hour)}, 0) // nothing left
	h.erase(analytics.Deletion{UserID: "user-2"}, 1)
	h.erase(analytics.Deletion{Cat: catBeta, Before: day(2), UserID: "user-1"}, 2)
	h.erase(analytics.Deletion{Before: day(30)}, 3)
	if len(h.ref) != 0 {
		t.Errorf("reference keeps %d rows after deleting everything", len(h.ref))
	}
}

// eraseUsers is the pool of users random logs draw from.
var eraseUsers = []string{"u1", "u2", "u3", "U1", "u1 "}

// testEraseProperty appends random logs and runs random deletions (by
// CAT and time, by user, both) with random batch sizes, comparing every
// read with the reference after every batch.
func testEraseProperty(t *testing.T, open func(t *testing.T) Erasable) {
	base := propertyBase(t)
	logs := uint64(4) // 2 under -short and the race detector
	if underRace || testing.Short() {
		logs = 2
	}
	for k := range logs {
		seed := base + k
		t.Run("seed="+strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("replay with %s=%d", PropertySeedEnv, seed)
				}
			})
			h := newEraseHarness(t, open(t), seed)
			g := newGenerator(h.r)
			for round := range 4 {
				in := g.log(40 + h.r.IntN(120))
				for k := range in {
					in[k].UserID = pick(h.r, eraseUsers)
				}
				h.append(in...)
				for range 1 + h.r.IntN(2) {
					h.erase(h.randomDeletion(round), 1+h.r.IntN(40))
					if t.Failed() {
						return
					}
				}
			}
		})
	}
}

func (h *eraseHarness) randomDeletion(round int) analytics.Deletion {
	var d analytics.Deletion
	switch h.r.IntN(3) {
	case 0:
		d.Before = day(h.r.IntN(genDays + 1)).Add(time.Duration(h.r.IntN(3)-1) * time.Hour)
	case 1:
		d.UserID = pick(h.r, eraseUsers)
	default:
		d.Before = day(h.r.IntN(genDays + 1))
		d.UserID = pick(h.r, eraseUsers)
	}
	if h.r.IntN(3) > 0 || round == 0 {
		d.Cat = pick(h.r, append(genCats, "gamma"))
	}
	return d
}

// checkBrowser compares the chat log's daily counts and its first page
// with the reference over what remains.
func (h *eraseHarness) checkBrowser(when string) {
	h.t.Helper()
	for _, cat := range []string{catAlpha, catBeta} {
		sel := analytics.Selection{Cat: cat}
		got, err := h.e.Browser.Daily(h.t.Context(), sel)
		if err != nil {
			h.t.Fatalf("%s: Daily(%s): %v", when, cat, err)
		}
		if want := chatlog.Daily(h.ref, sel); !slices.Equal(got, want) {
			h.t.Fatalf("%s: Daily(%s):\n got       %v\n reference %v", when, cat, got, want)
		}
		page, err := h.e.Browser.List(h.t.Context(), sel, chatlog.Page{Limit: chatlog.MaxPageSize})
		if err != nil {
			h.t.Fatalf("%s: List(%s): %v", when, cat, err)
		}
		want := 0
		for _, i := range h.ref {
			if sel.Matches(i) {
				want++
			}
		}
		if want <= chatlog.MaxPageSize && len(page.Entries) != want {
			h.t.Fatalf("%s: List(%s) gave %d entries, the reference holds %d", when, cat, len(page.Entries), want)
		}
	}
}
