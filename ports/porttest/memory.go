package porttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// TestMemoryStore runs the contract of ports.MemoryStore against the
// adapter open creates (a fresh, empty store per case).
func TestMemoryStore(t *testing.T, open func(t *testing.T) ports.MemoryStore) {
	at := time.Date(2026, 3, 1, 12, 30, 45, 123456000, time.UTC)
	set := func(p map[string]string) func(auth.Memory) (auth.Memory, error) {
		return func(cur auth.Memory) (auth.Memory, error) {
			next := maps.Clone(cur.Preferences)
			for k, v := range p {
				next[k] = json.RawMessage(v)
			}
			return auth.Memory{Preferences: next, UpdatedAt: at}, nil
		}
	}
	cases := []struct {
		name string
		run  func(t *testing.T, s ports.MemoryStore)
	}{
		{"EmptyWhenNone", func(t *testing.T, s ports.MemoryStore) {
			m := mustMemory(t, s, "alice")
			if m.Preferences == nil || len(m.Preferences) != 0 || !m.UpdatedAt.IsZero() {
				t.Fatalf("memory of a new user = %+v, want empty preferences and zero time", m)
			}
		}},
		{"UpdateStoresAndReturns", func(t *testing.T, s ports.MemoryStore) {
			got, err := s.UpdateMemory(t.Context(), "alice", set(map[string]string{"lang": `"fr"`, "n": `{"a":[1,2]}`}))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"lang": `"fr"`, "n": `{"a":[1,2]}`}
			assertPrefs(t, "returned", got, want, at)
			assertPrefs(t, "read back", mustMemory(t, s, "alice"), want, at)
		}},
		{"UpdateSeesCurrent", func(t *testing.T, s ports.MemoryStore) {
			mustUpdate(t, s, "alice", set(map[string]string{"a": "1"}))
			mustUpdate(t, s, "alice", set(map[string]string{"b": "2"}))
			assertPrefs(t, "after two updates", mustMemory(t, s, "alice"), map[string]string{"a": "1", "b": "2"}, at)
		}},
		{"FailedChangeStoresNothing", func(t *testing.T, s ports.MemoryStore) {
			mustUpdate(t, s, "alice", set(map[string]string{"a": "1"}))
			boom := errs.New(errs.KindTooLarge, "too large")
			_, err := s.UpdateMemory(t.Context(), "alice", func(auth.Memory) (auth.Memory, error) { return auth.Memory{}, boom })
			if !errors.Is(err, boom) {
				t.Fatalf("UpdateMemory error = %v, want the change's error", err)
			}
			_, err = s.UpdateMemory(t.Context(), "bob", func(auth.Memory) (auth.Memory, error) { return auth.Memory{}, boom })
			if !errors.Is(err, boom) {
				t.Fatalf("UpdateMemory error = %v, want the change's error", err)
			}
			assertPrefs(t, "alice after a failed change", mustMemory(t, s, "alice"), map[string]string{"a": "1"}, at)
			assertPrefs(t, "bob after a failed first change", mustMemory(t, s, "bob"), map[string]string{}, time.Time{})
		}},
		{"UsersIsolated", func(t *testing.T, s ports.MemoryStore) {
			mustUpdate(t, s, "alice", set(map[string]string{"secret": `"a"`}))
			mustUpdate(t, s, "bob", set(map[string]string{"other": `"b"`}))
			assertPrefs(t, "alice", mustMemory(t, s, "alice"), map[string]string{"secret": `"a"`}, at)
			assertPrefs(t, "bob", mustMemory(t, s, "bob"), map[string]string{"other": `"b"`}, at)
			if err := s.DeleteMemory(t.Context(), "bob"); err != nil {
				t.Fatal(err)
			}
			assertPrefs(t, "alice after bob's delete", mustMemory(t, s, "alice"), map[string]string{"secret": `"a"`}, at)
		}},
		{"DeleteClearsAndIsIdempotent", func(t *testing.T, s ports.MemoryStore) {
			mustUpdate(t, s, "alice", set(map[string]string{"a": "1"}))
			for range 2 {
				if err := s.DeleteMemory(t.Context(), "alice"); err != nil {
					t.Fatal(err)
				}
				assertPrefs(t, "after delete", mustMemory(t, s, "alice"), map[string]string{}, time.Time{})
			}
		}},
		{"ReturnedMapIsACopy", func(t *testing.T, s ports.MemoryStore) {
			mustUpdate(t, s, "alice", set(map[string]string{"a": "1"}))
			m := mustMemory(t, s, "alice")
			m.Preferences["b"] = json.RawMessage("2")
			assertPrefs(t, "after changing a returned map", mustMemory(t, s, "alice"), map[string]string{"a": "1"}, at)
		}},
		{"ConcurrentUpdatesAllKept", func(t *testing.T, s ports.MemoryStore) {
			const writers = 8
			var wg sync.WaitGroup
			errc := make(chan error, writers)
			want := map[string]string{}
			for i := range writers {
				key := fmt.Sprintf("k%d", i)
				want[key] = fmt.Sprint(i)
				wg.Go(func() {
					_, err := s.UpdateMemory(context.WithoutCancel(t.Context()), "alice", set(map[string]string{key: fmt.Sprint(i)}))
					errc <- err
				})
			}
			wg.Wait()
			close(errc)
			for err := range errc {
				if err != nil {
					t.Fatal(err)
				}
			}
			assertPrefs(t, "after concurrent updates", mustMemory(t, s, "alice"), want, at)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

func mustMemory(t *testing.T, s ports.MemoryStore, user string) auth.Memory {
	t.Helper()
	m, err := s.Memory(t.Context(), user)
	if err != nil {
		t.Fatalf("Memory(%s): %v", user, err)
	}
	return m
}

func mustUpdate(t *testing.T, s ports.MemoryStore, user string, change func(auth.Memory) (auth.Memory, error)) {
	t.Helper()
	if _, err := s.UpdateMemory(t.Context(), user, change); err != nil {
		t.Fatalf("UpdateMemory(%s): %v", user, err)
	}
}

func assertPrefs(t *testing.T, what string, m auth.Memory, want map[string]string, at time.Time) {
	t.Helper()
	got := map[string]string{}
	for k, v := range m.Preferences {
		got[k] = string(v)
	}
	if !maps.Equal(got, want) || !m.UpdatedAt.Equal(at) {
		t.Fatalf("%s: preferences %v at %v, want %v at %v", what, got, m.UpdatedAt, want, at)
	}
}
