package porttest

import (
	"bytes"
	"context"
	"testing"

	"github.com/catsrv/catsrv/ports"
)

// TestCatOverrideStore is the contract of ports.CatOverrideStore. open
// returns a fresh, empty store; reopen, when not nil, returns a new handle
// on the same storage (a restart).
func TestCatOverrideStore(t *testing.T, open func(t *testing.T) ports.CatOverrideStore, reopen func(t *testing.T) ports.CatOverrideStore) {
	ctx := context.Background()
	t.Run("EmptyAtFirst", func(t *testing.T) {
		got, err := open(t).CatOverrides(ctx)
		if err != nil || len(got) != 0 {
			t.Fatalf("got %v, %v; want no documents", got, err)
		}
	})
	t.Run("SaveReplacesPerCat", func(t *testing.T) {
		s := open(t)
		for _, step := range []struct{ cat, doc string }{
			{"demo", `{"chat_mode":"agent"}`}, {"shop", `{"chat_mode":"legacy"}`}, {"demo", `{"chat_mode":"custom"}`},
		} {
			if err := s.SaveCatOverride(ctx, step.cat, []byte(step.doc)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.CatOverrides(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || !bytes.Equal(got["demo"], []byte(`{"chat_mode":"custom"}`)) || !bytes.Equal(got["shop"], []byte(`{"chat_mode":"legacy"}`)) {
			t.Fatalf("got %q", got)
		}
		got["demo"][0] = 'X'
		again, err := s.CatOverrides(ctx)
		if err != nil || again["demo"][0] != '{' {
			t.Fatalf("a caller's change to a returned document reached the store: %q %v", again["demo"], err)
		}
		if reopen != nil {
			after, err := reopen(t).CatOverrides(ctx)
			if err != nil || !bytes.Equal(after["demo"], []byte(`{"chat_mode":"custom"}`)) {
				t.Fatalf("after a restart: %q %v", after, err)
			}
		}
	})
}
