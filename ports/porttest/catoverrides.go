package porttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// TestCatOverrideStore is the contract of ports.CatOverrideStore. open
// returns a fresh, empty store; reopen, when not nil, returns a new handle
// on the same storage (a restart, or another instance).
func TestCatOverrideStore(t *testing.T, open func(t *testing.T) ports.CatOverrideStore, reopen func(t *testing.T) ports.CatOverrideStore) {
	ctx := context.Background()
	t.Run("EmptyAtFirst", func(t *testing.T) {
		got, err := open(t).CatOverridesSince(ctx, 0)
		if err != nil || len(got) != 0 {
			t.Fatalf("got %v, %v; want no documents", got, err)
		}
	})
	t.Run("SaveReplacesPerCatWithGrowingVersions", func(t *testing.T) {
		s := open(t)
		versions := map[string]int64{}
		var last int64
		for _, step := range []struct{ cat, doc string }{
			{"demo", `{"chat_mode":"agent"}`}, {"shop", `{"chat_mode":"legacy"}`}, {"demo", `{"chat_mode":"custom"}`},
		} {
			v, err := s.SaveCatOverride(ctx, step.cat, versions[step.cat], []byte(step.doc))
			if err != nil {
				t.Fatal(err)
			}
			if v <= last {
				t.Fatalf("save of %s got version %d after %d: versions must grow", step.cat, v, last)
			}
			versions[step.cat], last = v, v
		}
		got, err := s.CatOverridesSince(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := []ports.CatOverride{
			{Cat: "shop", Doc: []byte(`{"chat_mode":"legacy"}`), Version: versions["shop"]},
			{Cat: "demo", Doc: []byte(`{"chat_mode":"custom"}`), Version: versions["demo"]},
		}
		if !sameOverrides(got, want) {
			t.Fatalf("since 0: got %s, want %s", showOverrides(got), showOverrides(want))
		}
		if after, err := s.CatOverridesSince(ctx, versions["shop"]); err != nil || !sameOverrides(after, want[1:]) {
			t.Fatalf("since %d: got %s, %v; want %s", versions["shop"], showOverrides(after), err, showOverrides(want[1:]))
		}
		if none, err := s.CatOverridesSince(ctx, versions["demo"]); err != nil || len(none) != 0 {
			t.Fatalf("since the newest version: got %s, %v; want nothing", showOverrides(none), err)
		}
		got[1].Doc[0] = 'X'
		again, err := s.CatOverridesSince(ctx, 0)
		if err != nil || !sameOverrides(again, want) {
			t.Fatalf("a caller's change to a returned document reached the store: %s %v", showOverrides(again), err)
		}
		if reopen != nil {
			after, err := reopen(t).CatOverridesSince(ctx, 0)
			if err != nil || !sameOverrides(after, want) {
				t.Fatalf("after a restart: %s %v", showOverrides(after), err)
			}
		}
	})
	t.Run("StaleSaveIsAConflictAndChangesNothing", func(t *testing.T) {
		s := open(t)
		v1, err := s.SaveCatOverride(ctx, "demo", 0, []byte(`{"a":1}`))
		if err != nil {
			t.Fatal(err)
		}
		for _, expected := range []int64{0, v1 + 100} {
			if _, err := s.SaveCatOverride(ctx, "demo", expected, []byte(`{"b":2}`)); errs.KindOf(err) != errs.KindConflict {
				t.Fatalf("save expecting version %d when %d is stored: %v, want a conflict", expected, v1, err)
			}
		}
		if _, err := s.SaveCatOverride(ctx, "fresh", v1, []byte(`{"c":3}`)); errs.KindOf(err) != errs.KindConflict {
			t.Fatalf("save expecting version %d of a CAT with none: %v, want a conflict", v1, err)
		}
		got, err := s.CatOverridesSince(ctx, 0)
		want := []ports.CatOverride{{Cat: "demo", Doc: []byte(`{"a":1}`), Version: v1}}
		if err != nil || !sameOverrides(got, want) {
			t.Fatalf("after refused saves: %s %v; want %s", showOverrides(got), err, showOverrides(want))
		}
	})
	t.Run("ConcurrentMergesOfDifferentKeysKeepEveryKey", func(t *testing.T) {
		s := open(t)
		handles := []ports.CatOverrideStore{s}
		if reopen != nil {
			handles = append(handles, reopen(t))
		}
		const writers = 8
		var wg sync.WaitGroup
		failures := make(chan error, writers)
		for i := range writers {
			wg.Go(func() {
				if err := mergeKey(ctx, handles[i%len(handles)], "demo", fmt.Sprintf("k%d", i), i); err != nil {
					failures <- err
				}
			})
		}
		wg.Wait()
		close(failures)
		for err := range failures {
			t.Fatal(err)
		}
		got, err := s.CatOverridesSince(ctx, 0)
		if err != nil || len(got) != 1 {
			t.Fatalf("got %s, %v", showOverrides(got), err)
		}
		var doc map[string]int
		if err := json.Unmarshal(got[0].Doc, &doc); err != nil {
			t.Fatal(err)
		}
		for i := range writers {
			if v, ok := doc[fmt.Sprintf("k%d", i)]; !ok || v != i {
				t.Fatalf("key k%d lost by concurrent merges: %s", i, got[0].Doc)
			}
		}
	})
	t.Run("FollowerReadingSinceMissesNoSave", func(t *testing.T) {
		s := open(t)
		reader := s
		if reopen != nil {
			reader = reopen(t)
		}
		const cats, rounds = 4, 10
		done := make(chan struct{})
		seen := map[string]ports.CatOverride{}
		var high int64
		follow := func() error {
			got, err := reader.CatOverridesSince(ctx, high)
			if err != nil {
				return err
			}
			for _, o := range got {
				if o.Version <= high {
					return fmt.Errorf("since %d returned version %d", high, o.Version)
				}
				seen[o.Cat] = o
				high = o.Version
			}
			return nil
		}
		var followErr error
		followed := make(chan struct{})
		go func() {
			defer close(followed)
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := follow(); err != nil {
					followErr = err
					return
				}
			}
		}()
		var wg sync.WaitGroup
		failures := make(chan error, cats)
		for c := range cats {
			wg.Go(func() {
				cat := fmt.Sprintf("cat%d", c)
				var version int64
				for r := range rounds {
					v, err := s.SaveCatOverride(ctx, cat, version, fmt.Appendf(nil, `{"round":%d}`, r))
					if err != nil {
						failures <- err
						return
					}
					version = v
				}
			})
		}
		wg.Wait()
		close(done)
		<-followed
		close(failures)
		for err := range failures {
			t.Fatal(err)
		}
		if followErr != nil {
			t.Fatal(followErr)
		}
		if err := follow(); err != nil {
			t.Fatal(err)
		}
		stored, err := s.CatOverridesSince(ctx, 0)
		if err != nil || len(stored) != cats {
			t.Fatalf("stored %s, %v", showOverrides(stored), err)
		}
		for _, o := range stored {
			if got := seen[o.Cat]; got.Version != o.Version || !bytes.Equal(got.Doc, o.Doc) {
				t.Fatalf("the follower holds %s at version %d (%s), the store %d (%s)", o.Cat, got.Version, got.Doc, o.Version, o.Doc)
			}
		}
	})
}

// mergeKey sets one key of the CAT's JSON document the way the overlay
// does: read the latest, merge, save against its version, again on a
// conflict.
func mergeKey(ctx context.Context, s ports.CatOverrideStore, cat, key string, value int) error {
	for range 1000 {
		all, err := s.CatOverridesSince(ctx, 0)
		if err != nil {
			return err
		}
		doc, version := map[string]int{}, int64(0)
		for _, o := range all {
			if o.Cat == cat {
				if err := json.Unmarshal(o.Doc, &doc); err != nil {
					return err
				}
				version = o.Version
			}
		}
		doc[key] = value
		b, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		_, err = s.SaveCatOverride(ctx, cat, version, b)
		if errs.KindOf(err) == errs.KindConflict {
			continue
		}
		return err
	}
	return fmt.Errorf("%s: no save of key %s got through", cat, key)
}

func sameOverrides(a, b []ports.CatOverride) bool {
	return slices.EqualFunc(a, b, func(x, y ports.CatOverride) bool {
		return x.Cat == y.Cat && x.Version == y.Version && bytes.Equal(x.Doc, y.Doc)
	})
}

func showOverrides(os []ports.CatOverride) string {
	var b bytes.Buffer
	for _, o := range os {
		fmt.Fprintf(&b, "[%s v%d %s]", o.Cat, o.Version, o.Doc)
	}
	return b.String()
}
