package overlay_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/catconfig/overlay"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/mocks"
)

// load returns a directory over the files on store, as an instance does
// at start-up.
func load(t *testing.T, store *memstore.CatOverrides) *overlay.Directory {
	t.Helper()
	d, err := overlay.Load(t.Context(), files(), store)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func cat(t *testing.T, d *overlay.Directory, name string) catconfig.Cat {
	t.Helper()
	c, err := d.Cat(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSyncMergesAgainstTheStoredLatest: two instances loaded the same
// state; each changes a different key of one CAT; the second sync merges
// into what the first saved, and after a refresh both serve both keys.
func TestSyncMergesAgainstTheStoredLatest(t *testing.T) {
	ctx := t.Context()
	store := memstore.NewCatOverrides()
	a, b := load(t, store), load(t, store)
	if _, err := a.Sync(ctx, "shop", overlay.Override{ChatMode: ptr(catconfig.ModeAgent)}); err != nil {
		t.Fatal(err)
	}
	got, err := b.Sync(ctx, "shop", overlay.Override{Agent: &overlay.AgentOverride{Model: ptr("m-b")}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Chat.ChatMode != catconfig.ModeAgent || got.Chat.Agent.Model != "m-b" {
		t.Fatalf("b's sync lost a's key: mode %q model %q", got.Chat.ChatMode, got.Chat.Agent.Model)
	}
	if c := cat(t, a, "shop"); c.Chat.Agent.Model == "m-b" {
		t.Fatalf("a applied b's change before reading it")
	}
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]*overlay.Directory{"a": a, "b": b} {
		if c := cat(t, d, "shop"); c.Chat.ChatMode != catconfig.ModeAgent || c.Chat.Agent.Model != "m-b" {
			t.Errorf("%s serves mode %q model %q, want agent and m-b", name, c.Chat.ChatMode, c.Chat.Agent.Model)
		}
	}
}

// TestConcurrentSyncsOnSeveralInstancesKeepEveryKey: instances sync
// different keys of one CAT at once; every key survives and every
// instance ends on the same configuration.
func TestConcurrentSyncsOnSeveralInstancesKeepEveryKey(t *testing.T) {
	ctx := t.Context()
	store := memstore.NewCatOverrides()
	dirs := []*overlay.Directory{load(t, store), load(t, store), load(t, store)}
	changes := []overlay.Override{
		{ChatMode: ptr(catconfig.ModeAgent)},
		{Agent: &overlay.AgentOverride{Model: ptr("m")}},
		{Agent: &overlay.AgentOverride{MaxTokens: ptr(42)}},
		{Agent: &overlay.AgentOverride{Temperature: ptr(0.5)}},
		{Legacy: &overlay.LegacyOverride{MinScore: ptr(0.25)}},
		{Agent: &overlay.AgentOverride{Instructions: ptr("be brief")}},
	}
	var wg sync.WaitGroup
	for i, change := range changes {
		wg.Go(func() {
			if _, err := dirs[i%len(dirs)].Sync(ctx, "shop", change); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i, d := range dirs {
		if err := d.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		c := cat(t, d, "shop")
		a := c.Chat.Agent
		if c.Chat.ChatMode != catconfig.ModeAgent || a.Model != "m" || a.MaxTokens != 42 || a.Temperature != 0.5 ||
			c.Chat.Legacy.MinScore != 0.25 || a.Instructions != "be brief" {
			t.Errorf("instance %d lost a key: %+v", i, c.Chat)
		}
	}
}

// TestRefreshAppliesOnlyNewerVersions: a follower that read a CAT's
// newest change keeps it when an older version shows up again.
func TestRefreshAppliesOnlyNewerVersions(t *testing.T) {
	ctx := t.Context()
	store := memstore.NewCatOverrides()
	a, b := load(t, store), load(t, store)
	for _, mode := range []string{catconfig.ModeAgent, catconfig.ModeCustom, catconfig.ModeLegacy} {
		if _, err := a.Sync(ctx, "other", overlay.Override{ChatMode: ptr(mode)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := cat(t, b, "other").Chat.ChatMode; got != catconfig.ModeLegacy {
		t.Fatalf("b serves %q, want the last change (legacy)", got)
	}
	// b changes another CAT: its own save leaves other's change as is.
	if _, err := b.Sync(ctx, "shop", overlay.Override{ChatMode: ptr(catconfig.ModeAgent)}); err != nil {
		t.Fatal(err)
	}
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := cat(t, a, "shop").Chat.ChatMode; got != catconfig.ModeAgent {
		t.Fatalf("a serves shop in %q, want agent", got)
	}
	if got := cat(t, a, "other").Chat.ChatMode; got != catconfig.ModeLegacy {
		t.Fatalf("a serves other in %q, want legacy", got)
	}
}

// TestRefreshSkipsAChangeItCannotApply: a stored change this instance's
// files do not allow is reported and skipped; the CAT keeps its earlier
// change and other CATs' changes apply.
func TestRefreshSkipsAChangeItCannotApply(t *testing.T) {
	ctx := t.Context()
	store := memstore.NewCatOverrides()
	d := load(t, store)
	if _, err := d.Sync(ctx, "shop", overlay.Override{ChatMode: ptr(catconfig.ModeAgent)}); err != nil {
		t.Fatal(err)
	}
	versions, err := store.CatOverridesSince(ctx, 0)
	if err != nil || len(versions) != 1 {
		t.Fatal(versions, err)
	}
	if _, err := store.SaveCatOverride(ctx, "shop", versions[0].Version, []byte(`{"chat_mode":"magic"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SaveCatOverride(ctx, "other", 0, []byte(`{"chat_mode":"custom"}`)); err != nil {
		t.Fatal(err)
	}
	if err := d.Refresh(ctx); errs.KindOf(err) != errs.KindInvalid {
		t.Fatalf("refresh: %v, want an invalid error naming shop", err)
	}
	if got := cat(t, d, "shop").Chat.ChatMode; got != catconfig.ModeAgent {
		t.Errorf("shop serves %q, want its earlier change (agent)", got)
	}
	if got := cat(t, d, "other").Chat.ChatMode; got != catconfig.ModeCustom {
		t.Errorf("other serves %q, want custom", got)
	}
}

// TestFollowRefreshesWhenWoken: with a poll too slow to matter, a wake
// alone brings another instance's change.
func TestFollowRefreshesWhenWoken(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	store := memstore.NewCatOverrides()
	a, b := load(t, store), load(t, store)
	wake := make(chan struct{}, 1)
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		b.Follow(ctx, time.Hour, wake, func(err error) { t.Error(err) })
	}()
	for i, mode := range []string{catconfig.ModeAgent, catconfig.ModeCustom} {
		if _, err := a.Sync(ctx, "shop", overlay.Override{ChatMode: ptr(mode)}); err != nil {
			t.Fatal(err)
		}
		wake <- struct{}{}
		deadline := time.Now().Add(10 * time.Second)
		for cat(t, b, "shop").Chat.ChatMode != mode {
			if time.Now().After(deadline) {
				t.Fatalf("change %d (%s) not applied after a wake", i, mode)
			}
			time.Sleep(time.Millisecond)
		}
	}
	cancel()
	<-followed
}

// TestSyncGivesUpOnAStoreThatAlwaysConflicts: a CAT that others change on
// every try ends in a temporary unavailable error, not a loop, and nothing
// is applied.
func TestSyncGivesUpOnAStoreThatAlwaysConflicts(t *testing.T) {
	ctx := t.Context()
	store := &mocks.CatOverrideStoreMock{
		CatOverridesSinceFunc: func(context.Context, int64) ([]ports.CatOverride, error) { return nil, nil },
		SaveCatOverrideFunc: func(context.Context, string, int64, []byte) (int64, error) {
			return 0, errs.New(errs.KindConflict, "changed meanwhile")
		},
	}
	d, err := overlay.Load(ctx, files(), store)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Sync(ctx, "shop", overlay.Override{ChatMode: ptr(catconfig.ModeAgent)})
	if errs.KindOf(err) != errs.KindUnavailable || !errors.Is(err, errs.ErrTemporary) {
		t.Fatalf("err = %v, want a temporary unavailable error", err)
	}
	if n := len(store.SaveCatOverrideCalls()); n < 2 || n > 100 {
		t.Fatalf("%d saves tried, want a few retries and then a stop", n)
	}
	if got := cat(t, d, "shop").Chat.ChatMode; got != catconfig.ModeLegacy {
		t.Fatalf("shop serves %q after a failed sync, want legacy", got)
	}
}

// TestFollowPolls: with no wake at all, the poll alone brings another
// instance's change.
func TestFollowPolls(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	store := memstore.NewCatOverrides()
	a, b := load(t, store), load(t, store)
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		b.Follow(ctx, 5*time.Millisecond, nil, func(err error) { t.Error(err) })
	}()
	if _, err := a.Sync(ctx, "shop", overlay.Override{ChatMode: ptr(catconfig.ModeCustom)}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for cat(t, b, "shop").Chat.ChatMode != catconfig.ModeCustom {
		if time.Now().After(deadline) {
			t.Fatal("the poll never applied the change")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-followed
}
