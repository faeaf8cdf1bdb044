package porttest

import (
	"slices"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// TestConversationPruner runs the contract of ports.ConversationPruner:
// only the CAT's conversations last active before the cut go, with their
// messages and search text, batch by batch; others (later, other CATs)
// stay whole.
func TestConversationPruner(t *testing.T, open func(t *testing.T) (ChatStore, ports.ConversationPruner)) {
	s, p := open(t)
	h := &convHarness{t: t, s: s}
	h.turn(alice, "old1", "n", true, c0, "unicorn sighting", "a")
	h.turn(bob, "old2", "n", true, c0.Add(time.Hour), "unicorn again", "a")
	h.turn(alice, "old3", "n", true, c0.Add(2*time.Hour), "q", "a")
	h.turn(alice, "revived", "n", true, c0, "q", "a")
	h.turn(alice, "revived", "", false, c0.Add(30*time.Hour), "later unicorn", "a") // active after the cut
	h.turn(alice, "new", "n", true, c0.Add(25*time.Hour), "q", "a")
	h.turn(aliceElsewhere, "elsewhere", "n", true, c0, "unicorn", "a")
	cut := c0.Add(24 * time.Hour)

	n, err := p.PruneConversations(t.Context(), alice.Cat, cut, 2)
	if err != nil || n != 3 {
		t.Fatalf("PruneConversations = %d, %v; want 3", n, err)
	}
	for _, gone := range []struct {
		o  chat.Owner
		id string
	}{{alice, "old1"}, {bob, "old2"}, {alice, "old3"}} {
		if _, _, err := s.Conversation(t.Context(), gone.o, gone.id); errs.KindOf(err) != errs.KindNotFound {
			t.Errorf("pruned %s: %v, want not found", gone.id, err)
		}
	}
	page, err := s.Conversations(t.Context(), alice, chat.Page{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range page.Conversations {
		ids = append(ids, c.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"new", "revived"}) {
		t.Errorf("alice keeps %v, want [new revived]", ids)
	}
	if _, msgs, err := s.Conversation(t.Context(), alice, "revived"); err != nil || len(msgs) != 4 {
		t.Errorf("revived: %d messages, %v; want 4", len(msgs), err)
	}
	if got := hitIDs(h.search(alice, "unicorn", 10)); !slices.Equal(got, []string{"revived"}) {
		t.Errorf("search after pruning = %v, want [revived]", got)
	}
	if got := hitIDs(h.search(bob, "unicorn", 10)); len(got) != 0 {
		t.Errorf("search finds pruned conversations: %v", got)
	}
	if got := hitIDs(h.search(aliceElsewhere, "unicorn", 10)); !slices.Equal(got, []string{"elsewhere"}) {
		t.Errorf("another CAT lost its conversation: %v", got)
	}
	if n, err := p.PruneConversations(t.Context(), alice.Cat, cut, 0); err != nil || n != 0 {
		t.Errorf("second prune = %d, %v; want 0", n, err)
	}
}
