package porttest

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// UsageStore is a store under the contract of ports.UsageCounter and
// ports.FeedbackRecorder.
type UsageStore struct {
	Log      ports.InteractionLog
	Feedback ports.FeedbackRecorder
	// Counts are every path that must count usage as the reference (the
	// store, a column index), by name.
	Counts map[string]ports.UsageCounter
	// Browser, when set, reads the interactions back: their usage and
	// feedback must round-trip, and the review queues match the reference.
	Browser ports.InteractionBrowser
	// Eraser, when set, erases a user: their feedback leaves every count.
	Eraser ports.InteractionEraser
}

// TestUsage runs the contract of ports.UsageCounter and
// ports.FeedbackRecorder: usage and feedback round-trip, every count
// equals analytics.CountUsage over the store's rows after every append,
// feedback change and erasure, and a feedback change is counted as soon
// as SetFeedback returns.
func TestUsage(t *testing.T, open func(t *testing.T) UsageStore) {
	t.Run("SetFeedbackErrors", func(t *testing.T) { testSetFeedbackErrors(t, open(t)) })
	t.Run("Property", func(t *testing.T) {
		base := propertyBase(t)
		logs := uint64(3)
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
				testUsageProperty(t, open(t), rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)))
			})
		}
	})
}

func testSetFeedbackErrors(t *testing.T, s UsageStore) {
	i := event(day(1), "t", "m", "p", "q", "a")
	i.InteractionID = "msg-1"
	if _, err := s.Log.Append(t.Context(), analytics.Each([]analytics.Interaction{i})); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, c := range []struct {
		cat, id string
		f       analytics.Feedback
		kind    errs.Kind
	}{
		{catAlpha, "msg-2", analytics.Feedback{Rating: analytics.RatingUp}, errs.KindNotFound},
		{catBeta, "msg-1", analytics.Feedback{Rating: analytics.RatingUp}, errs.KindNotFound},
		{catAlpha, "", analytics.Feedback{Rating: analytics.RatingUp}, errs.KindNotFound},
		{catAlpha, "msg-1", analytics.Feedback{Rating: "meh"}, errs.KindInvalid},
		{catAlpha, "msg-1", analytics.Feedback{Rating: "up", Comment: strings.Repeat("x", analytics.MaxFeedbackCommentChars+1)}, errs.KindInvalid},
	} {
		if err := s.Feedback.SetFeedback(ctx, c.cat, c.id, c.f); errs.KindOf(err) != c.kind {
			t.Errorf("SetFeedback(%q, %q, %+v) = %v, want kind %v", c.cat, c.id, c.f, err, c.kind)
		}
	}
	if err := s.Feedback.SetFeedback(ctx, catAlpha, "msg-1", analytics.Feedback{Rating: analytics.RatingDown, Reason: "wrong"}); err != nil {
		t.Fatal(err)
	}
	for name, c := range s.Counts {
		got, err := c.CountUsage(ctx, analytics.UsageQuery{Cat: catAlpha})
		if err != nil || got.Total.Down != 1 || got.Total.Up != 0 {
			t.Errorf("%s: after SetFeedback: %+v, %v", name, got.Total, err)
		}
	}
}

// usageHarness pairs a usage store with the reference.
type usageHarness struct {
	t   *testing.T
	s   UsageStore
	ref []analytics.Interaction
	r   *rand.Rand
	ids int
}

// randomUsage adds usage, feedback, an id and a user to an interaction.
func (h *usageHarness) randomUsage(i analytics.Interaction) analytics.Interaction {
	r := h.r
	h.ids++
	i.InteractionID = "id-" + strconv.Itoa(h.ids)
	i.UserID = pick(r, []string{"u1", "u2", "u3", ""})
	if r.IntN(5) > 0 {
		i.Usage.InputTokens, i.Usage.OutputTokens = r.Int64N(5000), r.Int64N(2000)
	}
	if r.IntN(3) == 0 {
		i.Usage.CostUSD = float64(r.IntN(1e6)) / 1e7
	}
	if r.IntN(4) > 0 {
		i.Usage.LatencyMS = analytics.MS(pick(r, []float64{0, 0.0005, 1, 99.5, 100, 250, 1e4, r.Float64() * 5000}))
	}
	if r.IntN(3) == 0 {
		i.Usage.FirstTokenMS = analytics.MS(r.Float64() * 900)
	}
	i.Feedback = h.randomFeedback()
	return i
}

func (h *usageHarness) randomFeedback() analytics.Feedback {
	switch h.r.IntN(4) {
	case 0:
		return analytics.Feedback{Rating: analytics.RatingUp}
	case 1:
		return analytics.Feedback{Rating: analytics.RatingDown, Reason: pick(h.r, []string{"", "wrong", "rude"}), Comment: pick(h.r, []string{"", "no", "é'%"})}
	}
	return analytics.Feedback{}
}

func (h *usageHarness) append(in []analytics.Interaction) {
	h.t.Helper()
	if _, err := h.s.Log.Append(h.t.Context(), analytics.Each(in)); err != nil {
		h.t.Fatalf("Append: %v", err)
	}
	for _, i := range in {
		h.ref = append(h.ref, i.Normalize())
	}
}

// check compares every count path with the reference over random
// queries, and the round trip and review queues when there is a browser.
func (h *usageHarness) check(when string, g *generator) {
	h.t.Helper()
	ctx := h.t.Context()
	for range 12 {
		sel := g.query(h.ref).Selection()
		q := analytics.UsageQuery{Cat: sel.Cat, Range: sel.Range, Filters: sel.Filters, GroupBy: analytics.GroupBy(h.r.IntN(5))}
		want := sortedUsage(analytics.CountUsage(h.ref, q))
		for name, c := range h.s.Counts {
			got, err := c.CountUsage(ctx, q)
			if err != nil {
				h.t.Fatalf("%s: %s: CountUsage(%+v): %v", name, when, q, err)
			}
			if got = sortedUsage(got); !usageEqual(got, want) {
				h.t.Fatalf("%s: %s: CountUsage(%+v)\n got %+v\nwant %+v", name, when, q, got, want)
			}
		}
	}
	if h.s.Browser == nil {
		return
	}
	for _, cat := range []string{catAlpha, catBeta} {
		sel := analytics.Selection{Cat: cat}
		for _, rv := range []chatlog.Review{{}, {Kind: chatlog.ReviewDown}, {Kind: chatlog.ReviewUnanswered, DefaultAnswer: "No."}} {
			var entries []chatlog.Entry
			for seq, i := range h.ref {
				entries = append(entries, chatlog.Entry{Interaction: i, Seq: int64(seq)})
			}
			want := chatlog.List(entries, sel, chatlog.Page{Limit: chatlog.MaxPageSize, Review: rv}).Entries
			l, err := h.s.Browser.List(ctx, sel, chatlog.Page{Limit: chatlog.MaxPageSize, Review: rv})
			if err != nil {
				h.t.Fatalf("%s: List(%+v): %v", when, rv, err)
			}
			key := func(e chatlog.Entry) string { return e.InteractionID }
			gotIDs, wantIDs := mapSorted(l.Entries, key), mapSorted(want, key)
			if !slices.Equal(gotIDs, wantIDs) {
				h.t.Fatalf("%s: review %+v of %s:\n got %q\nwant %q", when, rv, cat, gotIDs, wantIDs)
			}
			byID := map[string]analytics.Interaction{}
			for _, e := range want {
				byID[e.InteractionID] = e.Interaction
			}
			for _, e := range l.Entries {
				w := byID[e.InteractionID]
				// Stores keep times to the microsecond.
				w.Time, e.Time = w.Time.Truncate(time.Microsecond), e.Time.Truncate(time.Microsecond)
				if !e.Equal(w) {
					h.t.Fatalf("%s: read back\n got %+v\nwant %+v", when, e.Interaction, w)
				}
			}
		}
	}
}

func mapSorted[T any](in []T, f func(T) string) []string {
	out := make([]string, len(in))
	for k, v := range in {
		out[k] = f(v)
	}
	slices.Sort(out)
	return out
}

func sortedUsage(c analytics.UsageCounts) analytics.UsageCounts {
	c.Groups = slices.Clone(c.Groups)
	slices.SortFunc(c.Groups, func(a, b analytics.UsageGroup) int { return strings.Compare(a.Key, b.Key) })
	return c
}

func usageEqual(a, b analytics.UsageCounts) bool {
	return a.Total == b.Total && slices.Equal(a.Groups, b.Groups)
}

func testUsageProperty(t *testing.T, s UsageStore, r *rand.Rand) {
	h := &usageHarness{t: t, s: s, r: r}
	g := newGenerator(r)
	for round := range 2 {
		batch := g.log(40 + r.IntN(80))
		for k := range batch {
			batch[k] = h.randomUsage(batch[k])
		}
		h.append(batch)
		h.check("after append "+strconv.Itoa(round), g)
		// Feedback changes, each counted as soon as it returns.
		for range 10 {
			k := r.IntN(len(h.ref))
			f := h.randomFeedback()
			if err := s.Feedback.SetFeedback(t.Context(), h.ref[k].Cat, h.ref[k].InteractionID, f); err != nil {
				t.Fatalf("SetFeedback: %v", err)
			}
			h.ref[k].Feedback = f
		}
		h.check("after feedback "+strconv.Itoa(round), g)
	}
	if s.Eraser == nil {
		return
	}
	d := analytics.Deletion{UserID: "u1"}
	if _, err := s.Eraser.DeleteInteractions(context.WithoutCancel(t.Context()), d, 0); err != nil {
		t.Fatalf("DeleteInteractions: %v", err)
	}
	h.ref = slices.DeleteFunc(h.ref, d.Selects)
	h.check("after erasure", g)
}
