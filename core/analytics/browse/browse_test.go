package browse_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/browse"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports/mocks"
)

func seeded(t *testing.T, n int) *memstore.Store {
	t.Helper()
	var in []analytics.Interaction
	for k := range n {
		in = append(in, analytics.Interaction{
			Time: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(k) * time.Minute), Cat: "c", EventKind: "api",
			Topic: "t", Model: "m", Persona: "p", Question: "q", Answer: "a",
		})
	}
	s := memstore.New()
	if _, err := s.Append(context.Background(), analytics.Each(in)); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestExportStopsAtMaxAndKeepsOrder(t *testing.T) {
	s := browse.New(seeded(t, 1203))
	for _, max := range []int{1, 499, 500, 501, 1203, 5000} {
		var got []chatlog.Entry
		for e, err := range s.Export(t.Context(), analytics.Query{Cat: "c"}, chatlog.Position{}, max) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, e)
		}
		if want := min(max, 1203); len(got) != want {
			t.Errorf("max %d: %d entries, want %d", max, len(got), want)
		}
		for k := 1; k < len(got); k++ {
			if chatlog.Compare(got[k-1], got[k]) >= 0 {
				t.Fatalf("max %d: entries %d, %d out of order", max, k-1, k)
			}
		}
	}
}

func TestExportStopsWhenTheConsumerDoes(t *testing.T) {
	s := browse.New(seeded(t, 50))
	n := 0
	for range s.Export(t.Context(), analytics.Query{Cat: "c"}, chatlog.Position{}, 100) {
		n++
		if n == 3 {
			break
		}
	}
	if n != 3 {
		t.Errorf("got %d", n)
	}
}

func TestStoreFailuresAreInternal(t *testing.T) {
	boom := errors.New("disk on fire")
	m := &mocks.InteractionBrowserMock{
		ListFunc: func(context.Context, analytics.Selection, chatlog.Page) (chatlog.Listing, error) {
			return chatlog.Listing{}, boom
		},
		DailyFunc: func(context.Context, analytics.Selection) ([]chatlog.DayCount, error) { return nil, boom },
	}
	s := browse.New(m)
	q := analytics.Query{Cat: "c"}
	if _, err := s.List(t.Context(), q, chatlog.Page{Limit: 5}); errs.KindOf(err) != errs.KindInternal || !errors.Is(err, boom) {
		t.Errorf("List error %v", err)
	}
	if _, err := s.Daily(t.Context(), q); errs.KindOf(err) != errs.KindInternal || !errors.Is(err, boom) {
		t.Errorf("Daily error %v", err)
	}
	for _, err := range s.Export(t.Context(), q, chatlog.Position{}, 10) {
		if !errors.Is(err, boom) {
			t.Errorf("Export error %v", err)
		}
	}
}

func TestUnstorableSelectionsNeverReachTheStore(t *testing.T) {
	m := &mocks.InteractionBrowserMock{}
	s := browse.New(m)
	q := analytics.Query{Cat: "c", Filters: analytics.Filters{Topics: []string{"\x00"}}}
	if l, err := s.List(t.Context(), q, chatlog.Page{Limit: 5}); err != nil || len(l.Entries) != 0 {
		t.Errorf("List = %+v, %v", l, err)
	}
	if d, err := s.Daily(t.Context(), q); err != nil || len(d) != 0 {
		t.Errorf("Daily = %v, %v", d, err)
	}
	if len(m.ListCalls())+len(m.DailyCalls()) != 0 {
		t.Error("the store was asked")
	}
}

func TestNoStore(t *testing.T) {
	s := browse.New(nil)
	if _, err := s.List(t.Context(), analytics.Query{Cat: "c"}, chatlog.Page{Limit: 1}); errs.KindOf(err) != errs.KindInternal {
		t.Errorf("List without a store: %v", err)
	}
	if _, err := s.Daily(t.Context(), analytics.Query{Cat: "c"}); errs.KindOf(err) != errs.KindInternal {
		t.Errorf("Daily without a store: %v", err)
	}
}
