package retention_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/retention"
	"github.com/catsrv/catsrv/ports/mocks"
)

var now = time.Date(2026, 3, 10, 15, 30, 0, 0, time.UTC)

func cats(days map[string][2]int) *mocks.CatDirectoryMock {
	return &mocks.CatDirectoryMock{CatsFunc: func(context.Context) ([]catconfig.Cat, error) {
		var out []catconfig.Cat
		for _, name := range []string{"a", "b", "c"} {
			if d, ok := days[name]; ok {
				c := catconfig.Defaults(name)
				c.Analytics.RetentionDays, c.ChatLog.RetentionDays = d[0], d[1]
				out = append(out, c)
			}
		}
		return out, nil
	}}
}

func held(ok bool) *mocks.JobLockMock {
	return &mocks.JobLockMock{TryLockFunc: func(context.Context, string) (func(), bool, error) { return func() {}, ok, nil }}
}

func TestCuts(t *testing.T) {
	if got, want := retention.InteractionCut(now, 2), time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("InteractionCut(2 days) = %s, want %s", got, want)
	}
	if got := retention.InteractionCut(now, 0); !got.IsZero() {
		t.Errorf("InteractionCut(0) = %s, want zero (keep forever)", got)
	}
	if got, want := retention.ConversationCut(now, 1), now.Add(-24*time.Hour); !got.Equal(want) {
		t.Errorf("ConversationCut(1 day) = %s, want %s", got, want)
	}
}

// TestPassDeletesPerCat checks which deletions a pass asks for: each CAT's
// own cut, none for a CAT that keeps forever, and that a failing CAT does
// not stop the others.
func TestPassDeletesPerCat(t *testing.T) {
	var dels []analytics.Deletion
	eraser := &mocks.InteractionEraserMock{DeleteInteractionsFunc: func(_ context.Context, d analytics.Deletion, batch int) (int, error) {
		dels = append(dels, d)
		if batch != 7 {
			t.Errorf("batch %d, want 7", batch)
		}
		if d.Cat == "a" {
			return 1, errors.New("boom")
		}
		return 5, nil
	}}
	var pruned []string
	convs := &mocks.ConversationPrunerMock{PruneConversationsFunc: func(_ context.Context, cat string, before time.Time, _ int) (int, error) {
		pruned = append(pruned, cat)
		if want := now.Add(-3 * 24 * time.Hour); !before.Equal(want) {
			t.Errorf("conversation cut %s, want %s", before, want)
		}
		return 2, nil
	}}
	p := retention.New(retention.Deps{
		Cats: cats(map[string][2]int{"a": {1, 0}, "b": {0, 0}, "c": {2, 3}}), Interactions: eraser, Conversations: convs,
		Lock: held(true), Clock: &mocks.ClockMock{NowFunc: func() time.Time { return now }}, Batch: 7,
	})
	r, err := p.Pass(t.Context())
	if err == nil {
		t.Error("Pass hid CAT a's error")
	}
	if r.Skipped || r.Interactions != 6 || r.Conversations != 2 {
		t.Errorf("report %+v, want 6 interactions and 2 conversations", r)
	}
	if len(dels) != 2 || dels[0] != (analytics.Deletion{Cat: "a", Before: retention.InteractionCut(now, 1)}) ||
		dels[1] != (analytics.Deletion{Cat: "c", Before: retention.InteractionCut(now, 2)}) {
		t.Errorf("deletions %+v", dels)
	}
	if len(pruned) != 1 || pruned[0] != "c" {
		t.Errorf("pruned conversations of %v, want [c]", pruned)
	}
}

// TestPassSkipsWithoutTheLock checks that an instance without the job
// lock deletes nothing.
func TestPassSkipsWithoutTheLock(t *testing.T) {
	eraser := &mocks.InteractionEraserMock{}
	dir := cats(map[string][2]int{"a": {1, 1}})
	p := retention.New(retention.Deps{Cats: dir, Interactions: eraser, Lock: held(false),
		Clock: &mocks.ClockMock{NowFunc: func() time.Time { return now }}})
	r, err := p.Pass(t.Context())
	if err != nil || !r.Skipped {
		t.Fatalf("Pass = %+v, %v; want skipped", r, err)
	}
	if len(eraser.DeleteInteractionsCalls()) != 0 || len(dir.CatsCalls()) != 0 {
		t.Error("a skipped pass looked at the CATs or deleted")
	}
}
