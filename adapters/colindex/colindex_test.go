package colindex_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

// memLog is an in-memory interaction log that is also a colindex.Feed:
// the reference memstore decides what is stored (validation, all or
// nothing), and memLog numbers the stored rows as a database would.
type memLog struct {
	*memstore.Store
	mu   sync.Mutex
	rows []analytics.Interaction // row k has id k+1
	gone []bool                  // row k was deleted
	// dels lists the CAT of each deletion that removed api rows: its
	// generation is its position plus 1.
	dels []string
	// rates lists the CAT of each feedback change: its rating generation
	// is its position plus 1.
	rates []string
	ids   map[[2]string]bool // the (CAT, interaction id) of the rows
}

func newMemLog() *memLog { return &memLog{Store: memstore.New()} }

func (m *memLog) Append(ctx context.Context, in iter.Seq2[analytics.Interaction, error]) (int, error) {
	var seen []analytics.Interaction
	tee := func(yield func(analytics.Interaction, error) bool) {
		for i, err := range in {
			if err == nil {
				seen = append(seen, i)
			}
			if !yield(i, err) {
				return
			}
		}
	}
	// One Append at a time, so that the feed gets the rows the store kept:
	// an interaction whose id the CAT already has is not stored again.
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.Store.Append(ctx, tee)
	if err != nil {
		return n, err
	}
	if m.ids == nil {
		m.ids = map[[2]string]bool{}
	}
	for _, i := range seen {
		if key, ok := i.DedupeKey(); ok {
			if m.ids[key] {
				continue
			}
			m.ids[key] = true
		}
		m.rows = append(m.rows, i.Normalize())
		m.gone = append(m.gone, false)
	}
	return n, nil
}

func (m *memLog) ReadSince(_ context.Context, after int64, fn func(*analytics.FeedRow) error) (int64, error) {
	m.mu.Lock()
	rows, gone := slices.Clone(m.rows), slices.Clone(m.gone)
	m.mu.Unlock()
	last := after
	for k := int(after); k < len(rows); k++ {
		i := rows[k]
		if !i.Counted() || gone[k] {
			continue
		}
		r := feedRow(int64(k+1), i)
		if err := fn(&r); err != nil {
			return last, err
		}
		last = r.ID
	}
	return last, nil
}

// feedRow returns the feed row of a stored interaction.
func feedRow(id int64, i analytics.Interaction) analytics.FeedRow {
	r := analytics.FeedRow{ID: id, Micros: i.Time.UnixMicro(), Cat: []byte(i.Cat),
		Topic: []byte(i.Topic), Model: []byte(i.Model), Persona: []byte(i.Persona),
		QuestionID: []byte(i.QuestionID), Question: []byte(i.Question),
		AnswerID: []byte(i.AnswerID), Answer: []byte(i.Answer),
		InputTokens: i.Usage.InputTokens, OutputTokens: i.Usage.OutputTokens,
		CostNanos: analytics.CostNanos(i.Usage.CostUSD), Rating: analytics.RatingCode(i.Feedback.Rating)}
	if i.Usage.LatencyMS != nil {
		r.LatencyBucket = int32(analytics.LatencyBucket(*i.Usage.LatencyMS) + 1) // #nosec G115 -- a bucket
	}
	return r
}

// SetFeedback sets the feedback in the reference and in the stored row,
// recording the CAT in the rating feed.
func (m *memLog) SetFeedback(ctx context.Context, cat, interactionID string, f analytics.Feedback) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.Store.SetFeedback(ctx, cat, interactionID, f); err != nil {
		return err
	}
	for k, i := range m.rows {
		if !m.gone[k] && i.Cat == cat && i.InteractionID == interactionID {
			m.rows[k].Feedback = f
			m.rates = append(m.rates, cat)
		}
	}
	return nil
}

func (m *memLog) ReadRatingChanges(_ context.Context, after int64) (int64, []string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var cats []string
	for _, c := range m.rates[min(int(after), len(m.rates)):] {
		if !slices.Contains(cats, c) {
			cats = append(cats, c)
		}
	}
	slices.Sort(cats)
	return int64(len(m.rates)), cats, nil
}

func (m *memLog) ReadRated(ctx context.Context, cat string, upTo int64, fn func(*analytics.FeedRow) error) error {
	return m.ReadCat(ctx, cat, upTo, func(r *analytics.FeedRow) error {
		if r.Rating == analytics.RatingCodeNone {
			return nil
		}
		return fn(r)
	})
}

// stored returns the stored rows, for the reference.
func (m *memLog) stored() []analytics.Interaction {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []analytics.Interaction
	for k, i := range m.rows {
		if !m.gone[k] {
			out = append(out, i)
		}
	}
	return out
}

// DeleteInteractions deletes from the reference and marks the rows gone,
// recording the CATs that lost api rows in the deletion feed.
func (m *memLog) DeleteInteractions(ctx context.Context, d analytics.Deletion, batch int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.Store.DeleteInteractions(ctx, d, batch)
	if err != nil {
		return n, err
	}
	cats := map[string]bool{}
	for k, i := range m.rows {
		if !m.gone[k] && d.Selects(i) {
			m.gone[k] = true
			if key, ok := i.DedupeKey(); ok {
				delete(m.ids, key) // a deleted row's id may be stored again
			}
			if i.Counted() {
				cats[i.Cat] = true
			}
		}
	}
	for cat := range cats {
		m.dels = append(m.dels, cat)
	}
	return n, nil
}

func (m *memLog) ReadDeletions(_ context.Context, after int64) (int64, []string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var cats []string
	for _, c := range m.dels[min(int(after), len(m.dels)):] {
		if !slices.Contains(cats, c) {
			cats = append(cats, c)
		}
	}
	slices.Sort(cats)
	return int64(len(m.dels)), cats, nil
}

func (m *memLog) ReadCat(ctx context.Context, cat string, upTo int64, fn func(*analytics.FeedRow) error) error {
	_, err := m.ReadSince(ctx, 0, func(r *analytics.FeedRow) error {
		if r.ID > upTo || string(r.Cat) != cat {
			return nil
		}
		return fn(r)
	})
	return err
}

func build(t *testing.T, src colindex.Feed) *colindex.Index {
	t.Helper()
	idx, err := colindex.Build(t.Context(), src)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return idx
}

// TestContract holds the index to the interaction log contract, written
// through colindex.Log over the in-memory reference. The SQL back ends run
// the same suite in adapters/sqlstore.
func TestContract(t *testing.T) {
	porttest.TestInteractionLog(t, func(t *testing.T) (ports.InteractionLog, ports.Aggregator) {
		m := newMemLog()
		idx := build(t, m)
		return refreshingLog{InteractionLog: m, Index: idx}, idx
	})
}

// TestEraserContract holds the index to the deletion contract over the
// in-memory reference, deleting through colindex.Eraser: each deletion
// reaches the index before DeleteInteractions returns.
func TestEraserContract(t *testing.T) {
	porttest.TestInteractionEraser(t, func(t *testing.T) porttest.Erasable {
		m := newMemLog()
		idx := build(t, m)
		return porttest.Erasable{
			Log: refreshingLog{InteractionLog: m, Index: idx}, Eraser: colindex.Eraser{InteractionEraser: m, Index: idx},
			Reads: map[string]ports.Aggregator{"memory": m, "index": idx},
		}
	})
}

// tiedLog returns interactions with many equal counts and texts shared by
// several ids, appended out of time order, over two days.
func tiedLog(r *rand.Rand, n int) []analytics.Interaction {
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	out := make([]analytics.Interaction, n)
	for k := range out {
		q := r.IntN(40)
		out[k] = analytics.Interaction{
			Time: day.Add(time.Duration(r.IntN(48*60)) * time.Minute), Cat: "c", EventKind: analytics.EventKindAPI,
			Question: fmt.Sprintf("question %d", q%10), QuestionID: fmt.Sprintf("q-%d", q),
			Answer: fmt.Sprintf("answer %d", r.IntN(5)), Topic: []string{"b", "a", "c"}[r.IntN(3)],
			Model: "m", Persona: fmt.Sprintf("p%d", r.IntN(3)),
		}
	}
	return out
}

// TestGroupsComeSorted checks the index's speed trick: groups come in the
// order of analytics.SortGroups, ties included, for every dimension,
// across appends that add new entries and older rows. The single model
// and the three topics soon count more than the counting sort's buckets
// hold, so both of its paths are checked.
func TestGroupsComeSorted(t *testing.T) {
	m := newMemLog()
	idx := build(t, m)
	log := refreshingLog{InteractionLog: m, Index: idx}
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 5 {
		if _, err := log.Append(t.Context(), analytics.Each(tiedLog(r, 1000))); err != nil {
			t.Fatalf("Append: %v", err)
		}
		for _, d := range analytics.Dimensions {
			t.Run(fmt.Sprintf("round%d/%v", round, d), func(t *testing.T) {
				sel := analytics.Selection{Cat: "c"}
				got := answerOf(t, idx, sel, 0).Groups[d]
				want := analytics.CountGroups(m.rows, sel, d)
				analytics.SortGroups(want)
				if !slices.Equal(got, want) {
					t.Errorf("list %v:\n got  %v\n want %v", d, got, want)
				}
			})
		}
	}
}

// TestRefreshSeesOtherWriters: rows another writer commits to the source
// are counted after the next Refresh, and a new index built from the
// source (a restart) counts the same.
func TestRefreshSeesOtherWriters(t *testing.T) {
	m := newMemLog()
	idx := build(t, m)
	r := rand.New(rand.NewPCG(5, 6))
	rows := tiedLog(r, 200)
	if _, err := m.Append(t.Context(), analytics.Each(rows)); err != nil {
		t.Fatalf("Append: %v", err)
	}
	sel := analytics.Selection{Cat: "c"}
	if n := totalOf(t, idx, sel); n != 0 {
		t.Fatalf("Total before Refresh = %d, want 0 (not yet seen)", n)
	}
	if err := idx.Refresh(t.Context()); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	want := analytics.CountTotal(m.rows, sel)
	if n := totalOf(t, idx, sel); n != want {
		t.Errorf("Total after Refresh = %d, want %d", n, want)
	}
	if n := totalOf(t, build(t, m), sel); n != want {
		t.Errorf("Total of a rebuilt index = %d, want %d", n, want)
	}
	if rowsSeen, high := idx.Stats(); rowsSeen != int(want) || high != int64(len(m.rows)) {
		t.Errorf("Stats = %d rows, high-water %d; want %d, %d", rowsSeen, high, want, len(m.rows))
	}
}

// TestFollowCatchesUp: Follow refreshes on its own.
func TestFollowCatchesUp(t *testing.T) {
	m := newMemLog()
	idx := build(t, m)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		idx.Follow(ctx, time.Millisecond, func(err error) { t.Errorf("refresh: %v", err) })
	}()
	defer func() { cancel(); <-done }()
	rows := tiedLog(rand.New(rand.NewPCG(7, 8)), 50)
	if _, err := m.Append(t.Context(), analytics.Each(rows)); err != nil {
		t.Fatalf("Append: %v", err)
	}
	for {
		if n := totalOf(t, idx, analytics.Selection{Cat: "c"}); n == int64(len(rows)) {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatal("Follow never caught up")
		case <-time.After(time.Millisecond):
		}
	}
}

// TestQueriesDuringRefresh runs queries while appends are applied (run
// with -race), and checks the final counts against the reference.
func TestQueriesDuringRefresh(t *testing.T) {
	m := newMemLog()
	idx := build(t, m)
	log := refreshingLog{InteractionLog: m, Index: idx}
	r := rand.New(rand.NewPCG(9, 10))
	batches := make([][]analytics.Interaction, 10)
	for k := range batches {
		batches[k] = tiedLog(r, 500)
	}
	sel := analytics.Selection{Cat: "c", Filters: analytics.Filters{Personas: []string{"p1"}}}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := idx.Answer(t.Context(), queryOf(sel, 0), analytics.PartTotal); err != nil {
					t.Errorf("Answer: %v", err)
					return
				}
				if _, err := idx.Answer(t.Context(), queryOf(sel, 0), analytics.AllParts); err != nil {
					t.Errorf("Answer: %v", err)
					return
				}
			}
		}()
	}
	for _, b := range batches {
		if _, err := log.Append(t.Context(), analytics.Each(b)); err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
	close(done)
	wg.Wait()
	expectAnswer(t, "after concurrent appends", idx, m.rows, sel, 0)
}

// TestSelectiveFilters covers the paths a selective question or answer
// filter takes (the rows of the filtered codes alone) and a filter on
// topic, model or persona over whole days (the per-day cube), over rows
// appended out of time order, against the reference.
func TestSelectiveFilters(t *testing.T) {
	m := newMemLog()
	idx := build(t, m)
	log := refreshingLog{InteractionLog: m, Index: idx}
	r := rand.New(rand.NewPCG(11, 12))
	for range 3 {
		rows := tiedLog(r, 2000)
		for k := range rows {
			if k%50 == 0 { // a rare question and a rare answer
				rows[k].Question, rows[k].QuestionID = "rare question", "q-rare"
				rows[k].Answer = "rare answer"
			}
		}
		if _, err := log.Append(t.Context(), analytics.Each(rows)); err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
	rareAnswer := analytics.Interaction{Answer: "rare answer"}.Normalize().AnswerID
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	ranges := map[string]analytics.Range{
		"open": {}, "day one": {Start: day, End: day.AddDate(0, 0, 1)},
		"not whole days": {Start: day.Add(90 * time.Minute), End: day.Add(30 * time.Hour)},
	}
	filters := map[string]analytics.Filters{
		"question":            {QuestionIDs: []string{"q-rare"}},
		"question and answer": {QuestionIDs: []string{"q-rare", "q-3"}, AnswerIDs: []string{rareAnswer}},
		"question and model":  {QuestionIDs: []string{"q-rare"}, Personas: []string{"p0", "p2"}},
		"persona":             {Personas: []string{"p1"}},
		"topic and persona":   {Topics: []string{"a", "c"}, Personas: []string{"p0"}},
	}
	for rn, rng := range ranges {
		for fn, f := range filters {
			t.Run(rn+"/"+fn, func(t *testing.T) {
				sel := analytics.Selection{Cat: "c", Range: rng, Filters: f}
				if total, want := totalOf(t, idx, sel), analytics.CountTotal(m.rows, sel); total != want {
					t.Errorf("total = %d, reference %d", total, want)
				}
				for _, limit := range []int{0, 2} {
					expectAnswer(t, "answer", idx, m.rows, sel, limit)
				}
			})
		}
	}
}

// flakyFeed fails its reads while fail is set.
type flakyFeed struct {
	colindex.Feed
	fail atomic.Bool
}

func (f *flakyFeed) ReadSince(ctx context.Context, after int64, fn func(*analytics.FeedRow) error) (int64, error) {
	if f.fail.Load() {
		return after, errors.New("source down")
	}
	return f.Feed.ReadSince(ctx, after, fn)
}

// TestCurrentAt: CurrentAt is the start of the last successful refresh; a
// failed refresh leaves it where it was.
func TestCurrentAt(t *testing.T) {
	m := newMemLog()
	feed := &flakyFeed{Feed: m}
	before := time.Now()
	idx := build(t, feed)
	built := idx.CurrentAt()
	if built.Before(before) {
		t.Fatalf("CurrentAt after Build = %v, before the build began (%v)", built, before)
	}
	if _, err := m.Append(t.Context(), analytics.Each(tiedLog(rand.New(rand.NewPCG(7, 8)), 50))); err != nil {
		t.Fatal(err)
	}
	feed.fail.Store(true)
	if err := idx.Refresh(t.Context()); err == nil {
		t.Fatal("Refresh over a failing source succeeded")
	}
	if got := idx.CurrentAt(); !got.Equal(built) {
		t.Fatalf("a failed refresh moved CurrentAt from %v to %v", built, got)
	}
	if _, high := idx.Stats(); high != 0 {
		t.Fatalf("a failed refresh moved the high-water mark to %d", high)
	}
	feed.fail.Store(false)
	again := time.Now()
	if err := idx.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := idx.CurrentAt(); got.Before(again) {
		t.Fatalf("CurrentAt after a successful refresh = %v, before it began (%v)", got, again)
	}
	if _, high := idx.Stats(); high != 50 {
		t.Fatalf("high-water mark = %d, want 50", high)
	}
}

// refreshingLog is an interaction log whose appends reach the index
// before Append returns, by a refresh after each: read-your-writes for
// the in-memory reference, which tells no commits (the SQL store is
// wired with TellCommits(index.Hold) instead).
type refreshingLog struct {
	ports.InteractionLog
	Index *colindex.Index
}

func (l refreshingLog) Append(ctx context.Context, interactions iter.Seq2[analytics.Interaction, error]) (int, error) {
	n, err := l.InteractionLog.Append(ctx, interactions)
	if err != nil {
		return n, err
	}
	return n, l.Index.Refresh(ctx)
}
