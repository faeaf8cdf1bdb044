package porttest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// TestInteractionBrowser runs the contract of ports.InteractionBrowser
// against the adapter that open creates: listings and daily series must
// equal chatlog.List and chatlog.Daily over the same input, with ties in
// time allowed in any storage order but never lost or repeated by paging.
func TestInteractionBrowser(t *testing.T, open func(t *testing.T) (ports.InteractionLog, ports.InteractionBrowser)) {
	cases := []struct {
		name string
		run  func(t *testing.T, b *browseHarness)
	}{
		{"Empty", testBrowseEmpty},
		{"ListMatchesReference", testBrowseListMatchesReference},
		{"TiesPagedOnce", testBrowseTies},
		{"SeqGrowsWithAppend", testBrowseSeqGrows},
		{"DailyMatchesReference", testBrowseDaily},
		{"DaysBeforeEpoch", testBrowseBeforeEpoch},
		{"UnstorableFilterValues", testBrowseUnstorable},
		{"PageSizeChecked", testBrowsePageSize},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			log, browser := open(t)
			c.run(t, &browseHarness{t: t, log: log, browser: browser})
		})
	}
}

// browseHarness pairs a store under test with the reference log.
type browseHarness struct {
	t       *testing.T
	log     ports.InteractionLog
	browser ports.InteractionBrowser
	ref     []analytics.Interaction
}

func (b *browseHarness) append(in ...analytics.Interaction) {
	b.t.Helper()
	if _, err := b.log.Append(b.t.Context(), analytics.Each(in)); err != nil {
		b.t.Fatalf("Append: %v", err)
	}
	for _, i := range in {
		b.ref = append(b.ref, i.Normalize())
	}
}

// listAll pages through the selection with the page size and returns every
// entry, checking each page's size and Next.
func (b *browseHarness) listAll(sel analytics.Selection, size int) []chatlog.Entry {
	b.t.Helper()
	var all []chatlog.Entry
	var after chatlog.Position
	for pages := 0; ; pages++ {
		if pages > len(b.ref)+1 {
			b.t.Fatalf("List(%+v) never ends", sel)
		}
		l, err := b.browser.List(b.t.Context(), sel, chatlog.Page{After: after, Limit: size})
		if err != nil {
			b.t.Fatalf("List(%+v): %v", sel, err)
		}
		if len(l.Entries) > size {
			b.t.Fatalf("List returned %d entries, page size %d", len(l.Entries), size)
		}
		all = append(all, l.Entries...)
		if l.Next.IsZero() {
			return all
		}
		if len(l.Entries) != size {
			b.t.Errorf("a page with more to follow has %d entries, want %d", len(l.Entries), size)
		}
		if last := chatlog.PositionOf(l.Entries[len(l.Entries)-1]); last != l.Next {
			b.t.Errorf("Next = %+v, want the last entry's position %+v", l.Next, last)
		}
		after = l.Next
	}
}

// expectList pages through the selection and compares with the reference.
func (b *browseHarness) expectList(sel analytics.Selection, size int) []chatlog.Entry {
	b.t.Helper()
	got := b.listAll(sel, size)
	for k := 1; k < len(got); k++ {
		if chatlog.Compare(got[k-1], got[k]) >= 0 {
			b.t.Errorf("entries %d and %d out of order or with the same sequence number: %+v, %+v", k-1, k, got[k-1], got[k])
		}
	}
	var want []analytics.Interaction
	for _, i := range b.ref {
		if sel.Matches(i) {
			want = append(want, i)
		}
	}
	if len(got) != len(want) {
		b.t.Fatalf("List(%+v) gave %d entries over all pages, reference %d", sel, len(got), len(want))
	}
	// Equal times may come in any storage order: compare time by time.
	slices.SortStableFunc(want, func(x, y analytics.Interaction) int { return y.Time.Compare(x.Time) })
	gotKeys, wantKeys := make([]string, len(got)), make([]string, len(want))
	for k := range got {
		gotKeys[k], wantKeys[k] = entryKey(got[k].Interaction), entryKey(want[k])
	}
	for start := 0; start < len(got); {
		end := start + 1
		for end < len(got) && want[end].Time.Equal(want[start].Time) {
			end++
		}
		g, w := slices.Clone(gotKeys[start:end]), slices.Clone(wantKeys[start:end])
		slices.Sort(g)
		slices.Sort(w)
		if !slices.Equal(g, w) {
			b.t.Errorf("List(%+v) entries %d..%d:\n got       %q\n reference %q", sel, start, end-1, g, w)
		}
		start = end
	}
	return got
}

// entryKey is every field of an interaction that a listing returns.
func entryKey(i analytics.Interaction) string {
	return strings.Join([]string{i.Time.UTC().Format(time.RFC3339Nano), i.Cat, i.EventKind, i.Question, i.Answer,
		i.Topic, i.Model, i.Persona, i.QuestionID, i.AnswerID, i.UserID, i.ConversationID}, "\x00")
}

func (b *browseHarness) expectDaily(sel analytics.Selection) {
	b.t.Helper()
	got, err := b.browser.Daily(b.t.Context(), sel)
	if err != nil {
		b.t.Fatalf("Daily(%+v): %v", sel, err)
	}
	want := chatlog.Daily(b.ref, sel)
	if len(got) != len(want) {
		b.t.Fatalf("Daily(%+v) = %v, reference %v", sel, got, want)
	}
	var sum int64
	for k := range got {
		if !got[k].Day.Equal(want[k].Day) || got[k].Count != want[k].Count {
			b.t.Errorf("Daily(%+v)[%d] = %v, reference %v", sel, k, got[k], want[k])
		}
		sum += got[k].Count
	}
	if total := analytics.CountTotal(b.ref, sel); sum != total {
		b.t.Errorf("Daily(%+v) sums to %d, reference total %d", sel, sum, total)
	}
}

// browseSelections are selections over mixedLog that exercise every
// filter, OR within and AND across filters, and both range bounds.
func browseSelections() []analytics.Selection {
	return []analytics.Selection{
		{Cat: catAlpha},
		{Cat: catBeta},
		{Cat: "nobody"},
		{Cat: catAlpha, Range: analytics.Range{Start: day(1)}},
		{Cat: catAlpha, Range: analytics.Range{End: day(1)}},
		{Cat: catAlpha, Range: analytics.Range{Start: day(1), End: day(2)}},
		{Cat: catAlpha, Filters: analytics.Filters{Topics: []string{"billing"}}},
		{Cat: catAlpha, Filters: analytics.Filters{Topics: []string{"billing", "account"}, Models: []string{"model-a"}}},
		{Cat: catAlpha, Filters: analytics.Filters{Personas: []string{"student"}}},
		{Cat: catAlpha, Filters: analytics.Filters{QuestionIDs: []string{analytics.DeriveQuestionID("Where is my parcel?")}}},
		{Cat: catAlpha, Filters: analytics.Filters{AnswerIDs: []string{analytics.DeriveAnswerID("It ships tomorrow."), "a-none"}}},
		{Cat: catAlpha, Range: analytics.Range{Start: day(0), End: day(3)}, Filters: analytics.Filters{Models: []string{"model-c"}}},
	}
}

func testBrowseEmpty(t *testing.T, b *browseHarness) {
	l, err := b.browser.List(t.Context(), analytics.Selection{Cat: catAlpha}, chatlog.Page{Limit: 10})
	if err != nil || len(l.Entries) != 0 || !l.Next.IsZero() {
		t.Errorf("List on an empty store = %+v, %v", l, err)
	}
	d, err := b.browser.Daily(t.Context(), analytics.Selection{Cat: catAlpha})
	if err != nil || len(d) != 0 {
		t.Errorf("Daily on an empty store = %v, %v", d, err)
	}
}

func testBrowseListMatchesReference(t *testing.T, b *browseHarness) {
	log := mixedLog()
	b.append(log...)
	b.append(withCat(log[0], catBeta), withCat(log[3], catBeta))
	b.append(withIDs(event(day(2).Add(7*time.Hour), "account", "model-b", "admin", "Given?", "Given."), "q-given", "a-given"))
	for _, sel := range browseSelections() {
		for _, size := range []int{1, 3, chatlog.MaxPageSize} {
			t.Run("", func(t *testing.T) {
				c := *b
				c.t = t
				c.expectList(sel, size)
			})
		}
	}
}

func testBrowseTies(t *testing.T, b *browseHarness) {
	at := day(1).Add(12 * time.Hour)
	var in []analytics.Interaction
	for k := range 7 {
		q := "Same time " + string(rune('a'+k)) + "?"
		in = append(in, event(at, "account", "model-a", "student", q, "Yes."))
	}
	b.append(in[:4]...)
	b.append(event(at.Add(time.Second), "account", "model-a", "student", "Later?", "Yes."))
	b.append(in[4:]...)
	b.append(event(at.Add(-time.Second), "account", "model-a", "student", "Earlier?", "Yes."))
	for _, size := range []int{1, 2, 3} {
		got := b.expectList(analytics.Selection{Cat: catAlpha}, size)
		seen := map[int64]bool{}
		for _, e := range got {
			if seen[e.Seq] {
				t.Errorf("sequence number %d listed twice", e.Seq)
			}
			seen[e.Seq] = true
		}
	}
}

func testBrowseSeqGrows(t *testing.T, b *browseHarness) {
	at := day(0).Add(time.Hour)
	b.append(event(at, "account", "model-a", "student", "First?", "Yes."))
	b.append(event(at, "account", "model-a", "student", "Second?", "Yes."))
	got := b.expectList(analytics.Selection{Cat: catAlpha}, 10)
	if len(got) != 2 || got[0].Question != "Second?" || got[1].Question != "First?" {
		t.Errorf("same-time entries not newest-stored first: %+v", got)
	}
}

func testBrowseDaily(t *testing.T, b *browseHarness) {
	b.append(mixedLog()...)
	b.append(event(day(40).Add(23*time.Hour+59*time.Minute), "billing", "model-a", "admin", "Late?", "Yes."))
	b.append(event(day(41), "billing", "model-a", "admin", "Midnight?", "Yes."))
	for _, sel := range browseSelections() {
		b.expectDaily(sel)
	}
}

func testBrowseBeforeEpoch(t *testing.T, b *browseHarness) {
	epoch := time.Unix(0, 0).UTC()
	b.append(
		event(epoch.Add(-time.Hour), "account", "model-a", "student", "Before?", "Yes."),
		event(epoch.Add(-24*time.Hour), "account", "model-a", "student", "Day before?", "Yes."),
		event(epoch.Add(-24*time.Hour-time.Microsecond), "account", "model-a", "student", "Just before?", "Yes."),
		event(epoch, "account", "model-a", "student", "At?", "Yes."),
		event(epoch.Add(time.Hour), "account", "model-a", "student", "After?", "Yes."),
	)
	b.expectDaily(analytics.Selection{Cat: catAlpha})
	b.expectList(analytics.Selection{Cat: catAlpha}, 2)
}

func testBrowseUnstorable(t *testing.T, b *browseHarness) {
	b.append(mixedLog()...)
	for _, sel := range []analytics.Selection{
		{Cat: catAlpha, Filters: analytics.Filters{Topics: []string{"bad\x00"}}},
		{Cat: catAlpha, Filters: analytics.Filters{Models: []string{"\xff", "model-a"}}},
		{Cat: "bad\x00cat"},
		{Cat: catAlpha, Filters: analytics.Filters{Personas: []string{strings.Repeat("x", analytics.MaxFieldBytes+1)}}},
	} {
		b.expectList(sel, 4)
		b.expectDaily(sel)
	}
}

func testBrowsePageSize(t *testing.T, b *browseHarness) {
	for _, size := range []int{0, -1, chatlog.MaxPageSize + 1} {
		_, err := b.browser.List(context.WithoutCancel(t.Context()), analytics.Selection{Cat: catAlpha}, chatlog.Page{Limit: size})
		if errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("List with page size %d: error %v, want KindInvalid", size, err)
		}
	}
}
