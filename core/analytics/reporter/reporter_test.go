package reporter_test

import (
	"context"
	"errors"
	"reflect"
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

// call is one Answer call a store received.
type call struct {
	q    analytics.Query
	want analytics.Parts
}

// countingStore answers every call with fixed counts (7 in each wanted
// part) and records the calls.
func countingStore(calls *[]call) *mocks.InteractionLogMock {
	return &mocks.InteractionLogMock{
		AnswerFunc: func(_ context.Context, q analytics.Query, want analytics.Parts) (analytics.Counts, error) {
			*calls = append(*calls, call{q, want})
			c := analytics.Counts{Groups: map[analytics.Dimension][]analytics.Group{}}
			if want.Has(analytics.PartTotal) {
				c.Total = 7
			}
			for _, d := range analytics.Dimensions {
				if want.Has(analytics.ListOf(d)) {
					c.Groups[d] = []analytics.Group{{Key: d.String(), Text: d.String() + " text", Count: 7}}
				}
			}
			return c, nil
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

func TestAllAsksRawOnceForTheWholeAnswer(t *testing.T) {
	var raw, rolled []call
	rep := reporter.New(directory(), countingStore(&raw), countingStore(&rolled), fixedClock(0))
	f := analytics.Filters{Topics: []string{"t"}, Models: []string{"m"}, Personas: []string{"p"}, QuestionIDs: []string{"q"}, AnswerIDs: []string{"a"}}
	q := analytics.Query{Cat: "demo", Filters: f, Limit: 3}
	res, err := rep.All(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(rolled) != 0 {
		t.Fatalf("All must not read rollups, it made %d calls", len(rolled))
	}
	if len(raw) != 1 {
		t.Fatalf("want one call for the whole answer, got %d calls", len(raw))
	}
	if raw[0].want != analytics.AllParts {
		t.Fatalf("All must want every part, asked for %b", raw[0].want)
	}
	if !reflect.DeepEqual(raw[0].q, q) {
		t.Fatalf("the store must get the query as it is (every filter, the limit): got %+v, want %+v", raw[0].q, q)
	}
	if res.TotalInteractions != 7 || res.Questions[0].Question != "questionid text" || res.Answers[0].Answers != "answerid text" || res.TopicCounts[0].Percentage != 100 {
		t.Fatalf("result not assembled from the counts: %+v", res)
	}
}

func TestWarehouseReadsRollupsAndTimesItself(t *testing.T) {
	var raw, rolled []call
	rep := reporter.New(directory(), countingStore(&raw), countingStore(&rolled), fixedClock(1500*time.Microsecond))
	_, ms, err := rep.Warehouse(context.Background(), analytics.Query{Cat: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 0 || len(rolled) != 1 || rolled[0].want != analytics.AllParts {
		t.Fatalf("warehouse must read rollups only, once, for every part: raw %d, rollups %v", len(raw), rolled)
	}
	if ms != 1.5 {
		t.Fatalf("performance ms = %v, want 1.5 (one clock step)", ms)
	}
}

func TestUnmatchableFilterAsksNoStore(t *testing.T) {
	var raw []call
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
	if len(raw) != 1 || raw[0].want != analytics.ListOf(analytics.Topic) {
		t.Fatalf("only the topic list may reach the store, got %+v", raw)
	}
	if len(raw[0].q.Filters.Topics) != 0 {
		t.Fatalf("an unstorable value reached the store: %q", raw[0].q.Filters.Topics)
	}

	raw = nil
	q.Filters.Models = []string{"bad\x00model"}
	if res, err = rep.All(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	if len(raw) != 0 || res.TotalInteractions != 0 || len(res.TopicCounts) != 0 || len(res.ModelCounts) != 0 {
		t.Fatalf("two unmatchable filters leave nothing to count: %d calls, %+v", len(raw), res)
	}
	if n, err := rep.TotalInteractions(context.Background(), analytics.Query{Cat: "demo", Filters: analytics.Filters{Topics: []string{"bad\x00topic"}}}); err != nil || n != 0 || len(raw) != 0 {
		t.Fatalf("the total under an unmatchable filter is 0 without asking: %d, %v, %d calls", n, err, len(raw))
	}

	q.Filters = analytics.Filters{Topics: []string{"bad\x00topic", "billing"}}
	if _, err := rep.All(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	if len(raw) != 1 || raw[0].want != analytics.AllParts {
		t.Fatalf("a filter with one storable value still matches: want the whole answer asked, got %+v", raw)
	}
	if got := raw[0].q.Filters.Topics; len(got) != 1 || got[0] != "billing" {
		t.Fatalf("an unstorable value reached the store: %q", got)
	}
}

func TestStoreFailureIsInternalAndHidesCause(t *testing.T) {
	failing := &mocks.InteractionLogMock{
		AnswerFunc: func(context.Context, analytics.Query, analytics.Parts) (analytics.Counts, error) {
			return analytics.Counts{}, errors.New(`pq: relation "interactions" does not exist`)
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

// TestMetricRoutesUseRollupsAndLimit: each metric route asks the rollups
// once, for its own part only, with the query's limit.
func TestMetricRoutesUseRollupsAndLimit(t *testing.T) {
	var raw, rolled []call
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
	if qs, _, err := rep.Questions(ctx, q); err != nil || len(qs) != 1 {
		t.Fatalf("questions %v %v", qs, err)
	}
	if as, _, err := rep.Answers(ctx, q); err != nil || len(as) != 1 {
		t.Fatalf("answers %v %v", as, err)
	}
	if len(raw) != 0 || len(rolled) != 5 {
		t.Fatalf("metric routes must read rollups: raw %d, rollups %d", len(raw), len(rolled))
	}
	parts := []analytics.Parts{analytics.PartTotal, analytics.ListOf(analytics.Topic), analytics.ListOf(analytics.Model),
		analytics.ListOf(analytics.Question), analytics.ListOf(analytics.Answer)}
	for k, c := range rolled {
		if c.want != parts[k] || c.q.Limit != 1 {
			t.Errorf("call %d asked for %b with limit %d, want %b with limit 1", k, c.want, c.q.Limit, parts[k])
		}
	}
}

// TestLimitCutsTheLists: the question and answer lists of a result keep
// the first Limit entries in list order, whatever the store returned;
// the other lists are never cut.
func TestLimitCutsTheLists(t *testing.T) {
	groups := []analytics.Group{{Key: "b", Text: "b", Count: 1}, {Key: "a", Text: "a", Count: 5}, {Key: "c", Text: "c", Count: 5}}
	rollups := &mocks.RollupStoreMock{
		AnswerFunc: func(_ context.Context, _ analytics.Query, want analytics.Parts) (analytics.Counts, error) {
			c := analytics.Counts{Total: 11, Groups: map[analytics.Dimension][]analytics.Group{}}
			for _, d := range analytics.Dimensions {
				c.Groups[d] = groups
			}
			return c, nil
		},
	}
	rep := reporter.New(directory(), &mocks.InteractionLogMock{}, rollups, fixedClock(0))
	res, _, err := rep.Warehouse(context.Background(), analytics.Query{Cat: "demo", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Questions) != 2 || res.Questions[0].ID != "a" || res.Questions[1].ID != "c" || len(res.Answers) != 2 {
		t.Fatalf("questions %+v, answers %+v: want a, c", res.Questions, res.Answers)
	}
	if len(res.TopicCounts) != 3 || len(res.ModelCounts) != 3 || len(res.PersonaCounts) != 3 {
		t.Fatalf("topic, model and persona lists are never cut: %+v", res)
	}
}
