package reporter_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/reporter"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports/mocks"
)

func directory() *mocks.CatDirectoryMock {
	return &mocks.CatDirectoryMock{
		CatFunc: func(_ context.Context, name string) (catconfig.Cat, error) {
			if name == "demo" {
				return catconfig.Defaults("demo"), nil
			}
			return catconfig.Cat{}, errs.New(errs.KindNotFound, "no such CAT")
		},
	}
}

// countingStore answers every call with fixed counts and records the
// selections it was asked about.
func countingStore(calls *[]analytics.Selection) *mocks.InteractionLogMock {
	return &mocks.InteractionLogMock{
		TotalFunc: func(_ context.Context, s analytics.Selection) (int64, error) {
			*calls = append(*calls, s)
			return 7, nil
		},
		GroupsFunc: func(_ context.Context, s analytics.Selection, d analytics.Dimension) ([]analytics.Group, error) {
			*calls = append(*calls, s)
			return []analytics.Group{{Key: d.String(), Text: d.String() + " text", Count: 7}}, nil
		},
	}
}

func fixedClock(step time.Duration) *mocks.ClockMock {
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	return &mocks.ClockMock{NowFunc: func() time.Time { t = t.Add(step); return t }}
}

func TestResolve(t *testing.T) {
	rep := reporter.New(directory(), &mocks.InteractionLogMock{}, &mocks.RollupStoreMock{}, fixedClock(0))
	tests := []struct {
		name     string
		req      reporter.Request
		wantKind errs.Kind
		wantMsg  string
	}{
		{name: "ok", req: reporter.Request{Cat: "demo", StartDate: "2024-01-01", EndDate: "2024-02-01"}},
		{name: "unknown CAT", req: reporter.Request{Cat: "nope"}, wantKind: errs.KindNotFound, wantMsg: `CAT "nope" not found in configuration`},
		{name: "long unknown CAT is cut", req: reporter.Request{Cat: strings.Repeat("x", 500)}, wantKind: errs.KindNotFound, wantMsg: `CAT "` + strings.Repeat("x", 64) + `..." not found in configuration`},
		{name: "bad start", req: reporter.Request{Cat: "demo", StartDate: "01-01-2024"}, wantKind: errs.KindInvalid, wantMsg: "Invalid startDate format. Expected YYYY-MM-DD: "},
		{name: "bad end", req: reporter.Request{Cat: "demo", EndDate: "2024-02-30"}, wantKind: errs.KindInvalid, wantMsg: "Invalid endDate format. Expected YYYY-MM-DD: "},
		{name: "start not before end", req: reporter.Request{Cat: "demo", StartDate: "2024-02-01", EndDate: "2024-02-01"}, wantKind: errs.KindInvalid, wantMsg: "startDate must be before endDate"},
		{name: "negative limit", req: reporter.Request{Cat: "demo", Limit: -1}, wantKind: errs.KindInvalid, wantMsg: "limit must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, cat, err := rep.Resolve(context.Background(), tt.req)
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatal(err)
				}
				if q.Cat != "demo" || cat.Name != "demo" || q.Range.Start.IsZero() || q.Range.End.IsZero() {
					t.Fatalf("unexpected query %+v / cat %+v", q, cat)
				}
				return
			}
			if errs.KindOf(err) != tt.wantKind || !strings.HasPrefix(errs.PublicMessage(err, ""), tt.wantMsg) {
				t.Fatalf("err = %v (kind %v), want %v %q", err, errs.KindOf(err), tt.wantKind, tt.wantMsg)
			}
		})
	}
}

func TestAllAsksRawPerListWithoutItsOwnFilter(t *testing.T) {
	var raw, rolled []analytics.Selection
	rep := reporter.New(directory(), countingStore(&raw), countingStore(&rolled), fixedClock(0))
	f := analytics.Filters{Topics: []string{"t"}, Models: []string{"m"}, Personas: []string{"p"}, QuestionIDs: []string{"q"}, AnswerIDs: []string{"a"}}
	q := analytics.Query{Cat: "demo", Filters: f}
	res, err := rep.All(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(rolled) != 0 {
		t.Fatalf("All must not read rollups, it made %d calls", len(rolled))
	}
	if len(raw) != 1+len(analytics.Dimensions) {
		t.Fatalf("want one total and one call per dimension, got %d calls", len(raw))
	}
	if got := raw[0].Filters; got.IsZero() || len(got.Topics) != 1 {
		t.Fatalf("total must apply every filter, got %+v", got)
	}
	for i, d := range analytics.Dimensions {
		s := raw[i+1]
		if len(s.Filters.Values(d)) != 0 {
			t.Fatalf("list %v applied its own filter", d)
		}
		for _, other := range analytics.Dimensions {
			if other != d && len(s.Filters.Values(other)) != 1 {
				t.Fatalf("list %v dropped the %v filter", d, other)
			}
		}
	}
	if res.TotalInteractions != 7 || res.Questions[0].Question != "questionid text" || res.Answers[0].Answers != "answerid text" || res.TopicCounts[0].Percentage != 100 {
		t.Fatalf("result not assembled from the counts: %+v", res)
	}
}

func TestWarehouseReadsRollupsAndTimesItself(t *testing.T) {
	var raw, rolled []analytics.Selection
	rep := reporter.New(directory(), countingStore(&raw), countingStore(&rolled), fixedClock(1500*time.Microsecond))
	_, ms, err := rep.Warehouse(context.Background(), analytics.Query{Cat: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 0 || len(rolled) == 0 {
		t.Fatalf("warehouse must read rollups only: raw %d, rollups %d", len(raw), len(rolled))
	}
	if ms != 1.5 {
		t.Fatalf("performance ms = %v, want 1.5 (one clock step)", ms)
	}
}

func TestUnmatchableFilterAsksNoStore(t *testing.T) {
	var raw []analytics.Selection
	rep := reporter.New(directory(), countingStore(&raw), countingStore(&raw), fixedClock(0))
	q := analytics.Query{Cat: "demo", Filters: analytics.Filters{Topics: []string{"bad\x00topic"}}}
	res, err := rep.All(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if res.TotalInteractions != 0 || len(res.ModelCounts) != 0 {
		t.Fatalf("a NUL filter matches nothing: %+v", res)
	}
	if len(res.TopicCounts) != 1 {
		t.Fatalf("the topic list ignores its own filter and must still be asked: %+v", res.TopicCounts)
	}
	if len(raw) != 1 {
		t.Fatalf("only the topic list may reach the store, got %d calls", len(raw))
	}

	raw = nil
	q.Filters.Topics = []string{"bad\x00topic", "billing"}
	if _, err := rep.All(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	if len(raw) != 1+len(analytics.Dimensions) {
		t.Fatalf("a filter with one storable value still matches: want every list asked, got %d calls", len(raw))
	}
	for _, s := range raw {
		for _, v := range s.Filters.Topics {
			if v != "billing" {
				t.Fatalf("an unstorable value reached the store: %q", v)
			}
		}
	}
}

func TestStoreFailureIsInternalAndHidesCause(t *testing.T) {
	failing := &mocks.InteractionLogMock{
		TotalFunc: func(context.Context, analytics.Selection) (int64, error) {
			return 0, errors.New(`pq: relation "interactions" does not exist`)
		},
	}
	rep := reporter.New(directory(), failing, &mocks.RollupStoreMock{}, fixedClock(0))
	_, err := rep.All(context.Background(), analytics.Query{Cat: "demo"})
	if errs.KindOf(err) != errs.KindInternal {
		t.Fatalf("kind = %v, want internal", errs.KindOf(err))
	}
	if msg := errs.PublicMessage(err, "internal error"); strings.Contains(msg, "relation") {
		t.Fatalf("cause leaked into public message %q", msg)
	}
}

func TestMetricRoutesUseRollupsAndLimit(t *testing.T) {
	var raw, rolled []analytics.Selection
	rep := reporter.New(directory(), countingStore(&raw), countingStore(&rolled), fixedClock(0))
	ctx := context.Background()
	q := analytics.Query{Cat: "demo", Limit: 1}
	if n, err := rep.TotalInteractions(ctx, q); err != nil || n != 7 {
		t.Fatalf("total %d %v", n, err)
	}
	if tc, err := rep.TopicCounts(ctx, q); err != nil || len(tc) != 1 {
		t.Fatalf("topics %v %v", tc, err)
	}
	if mc, err := rep.ModelCounts(ctx, q); err != nil || len(mc) != 1 {
		t.Fatalf("models %v %v", mc, err)
	}
	if qs, err := rep.Questions(ctx, q); err != nil || len(qs) != 1 {
		t.Fatalf("questions %v %v", qs, err)
	}
	if as, err := rep.Answers(ctx, q); err != nil || len(as) != 1 {
		t.Fatalf("answers %v %v", as, err)
	}
	if len(raw) != 0 || len(rolled) != 5 {
		t.Fatalf("metric routes must read rollups: raw %d, rollups %d", len(raw), len(rolled))
	}
}

func TestLimitedListsAskForTopGroupsWhenOffered(t *testing.T) {
	var grouped, topped []analytics.Dimension
	var sizes []int
	rollups := &mocks.TopAggregatorMock{
		TotalFunc: func(context.Context, analytics.Selection) (int64, error) { return 3, nil },
		GroupsFunc: func(_ context.Context, _ analytics.Selection, d analytics.Dimension) ([]analytics.Group, error) {
			grouped = append(grouped, d)
			return []analytics.Group{{Key: "k", Text: "k", Count: 3}}, nil
		},
		TopGroupsFunc: func(_ context.Context, _ analytics.Selection, d analytics.Dimension, n int) ([]analytics.Group, error) {
			topped, sizes = append(topped, d), append(sizes, n)
			return []analytics.Group{{Key: "k", Text: "k", Count: 3}}, nil
		},
	}
	rep := reporter.New(directory(), &mocks.InteractionLogMock{}, rollups, fixedClock(0))
	if _, _, err := rep.Warehouse(context.Background(), analytics.Query{Cat: "demo", Limit: 7}); err != nil {
		t.Fatal(err)
	}
	if len(topped) != 2 || topped[0] != analytics.Question || topped[1] != analytics.Answer || sizes[0] != 7 || sizes[1] != 7 {
		t.Fatalf("TopGroups calls %v with sizes %v, want question and answer with 7", topped, sizes)
	}
	if len(grouped) != 3 {
		t.Fatalf("topic, model and persona lists are never cut: want 3 Groups calls, got %v", grouped)
	}

	grouped, topped = nil, nil
	if _, _, err := rep.Warehouse(context.Background(), analytics.Query{Cat: "demo"}); err != nil {
		t.Fatal(err)
	}
	if len(topped) != 0 || len(grouped) != len(analytics.Dimensions) {
		t.Fatalf("without a limit every list is whole: Groups %v, TopGroups %v", grouped, topped)
	}
}

// snapshotStore is a rollup store that can hold a snapshot: it records
// whether each call came with the snapshot's context, and the releases.
type snapshotStore struct {
	*mocks.RollupStoreMock
	pinnedCalls, otherCalls, releases int
	released                          bool
}

type pinKey struct{}

func (s *snapshotStore) Snapshot(ctx context.Context) (context.Context, func()) {
	return context.WithValue(ctx, pinKey{}, s), func() { s.releases++; s.released = true }
}

func (s *snapshotStore) record(ctx context.Context) {
	if ctx.Value(pinKey{}) == s && !s.released {
		s.pinnedCalls++
	} else {
		s.otherCalls++
	}
}

// TestResultReadsOneSnapshot: a full result asks a store that can hold a
// snapshot for its total and all its lists within one snapshot, released
// once at the end, so that a write committed meanwhile is in all of them
// or none.
func TestResultReadsOneSnapshot(t *testing.T) {
	s := &snapshotStore{}
	s.RollupStoreMock = &mocks.RollupStoreMock{
		TotalFunc: func(ctx context.Context, _ analytics.Selection) (int64, error) {
			s.record(ctx)
			return 7, nil
		},
		GroupsFunc: func(ctx context.Context, _ analytics.Selection, d analytics.Dimension) ([]analytics.Group, error) {
			s.record(ctx)
			return []analytics.Group{{Key: d.String(), Text: d.String(), Count: 7}}, nil
		},
	}
	rep := reporter.New(directory(), &mocks.InteractionLogMock{}, s, fixedClock(0))
	if _, _, err := rep.Warehouse(context.Background(), analytics.Query{Cat: "demo"}); err != nil {
		t.Fatal(err)
	}
	if want := 1 + len(analytics.Dimensions); s.pinnedCalls != want || s.otherCalls != 0 || s.releases != 1 {
		t.Errorf("%d calls within the snapshot, %d outside, %d releases; want %d, 0, 1", s.pinnedCalls, s.otherCalls, s.releases, want)
	}
}
