package porttest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// ChatStore is the conversation store and turn recorder one adapter
// implements together (the turn must be atomic across both).
type ChatStore interface {
	ports.ConversationStore
	ports.TurnRecorder
	ports.ConversationEraser
}

// TestConversationStore runs the contract of ports.ConversationStore and
// ports.TurnRecorder against the adapter open creates (fresh and empty per
// case); counts reads the interaction log the turns write to, as
// analytics does.
func TestConversationStore(t *testing.T, open func(t *testing.T) (store ChatStore, counts ports.Aggregator)) {
	cases := []struct {
		name string
		run  func(t *testing.T, c *convHarness)
	}{
		{"RecordAndRead", testRecordAndRead},
		{"AppendKeepsOrder", testAppendKeepsOrder},
		{"ForeignIsNotFound", testForeignIsNotFound},
		{"NewConflicts", testNewConflicts},
		{"InvalidInteractionStoresNothing", testInvalidInteractionStoresNothing},
		{"TurnWithoutInteraction", testTurnWithoutInteraction},
		{"ConversationWithoutMessages", testConversationWithoutMessages},
		{"ListPagesNewestFirst", testListPages},
		{"Rename", testRename},
		{"Delete", testDelete},
		{"DeleteConversationsOf", testDeleteConversationsOf},
		{"SearchRanksAndScopes", testSearchRanks},
		{"SearchAllTerms", testSearchAllTerms},
		{"SearchRejects", testSearchRejects},
		{"ToolCallsRoundTrip", testToolCallsRoundTrip},
		{"MessageIDs", testMessageIDs},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, counts := open(t)
			c.run(t, &convHarness{t: t, s: s, counts: counts})
		})
	}
}

var (
	alice = chat.Owner{Cat: "demo", UserID: "alice"}
	bob   = chat.Owner{Cat: "demo", UserID: "bob"}
	// aliceElsewhere is alice through another CAT: a different owner.
	aliceElsewhere = chat.Owner{Cat: "other", UserID: "alice"}
	c0             = time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
)

type convHarness struct {
	t      *testing.T
	s      ChatStore
	counts ports.Aggregator
	ids    int // messages named by turn
}

// turn records question and answer at `at` (the answer a second later),
// creating the conversation when isNew.
func (h *convHarness) turn(owner chat.Owner, id, name string, isNew bool, at time.Time, question, answer string) chat.Turn {
	h.t.Helper()
	h.ids += 2
	qid, aid := fmt.Sprintf("%x", h.ids-1), fmt.Sprintf("%x", h.ids)
	in := analytics.Interaction{
		Time: at.Add(time.Second), Cat: owner.Cat, EventKind: analytics.EventKindAPI, Question: question, Answer: answer,
		Topic: "general", Model: "qa", Persona: "default", UserID: owner.UserID, ConversationID: id, InteractionID: aid,
	}
	turn := chat.Turn{
		Conversation: chat.Conversation{ID: id, Owner: owner, Name: name, CreatedAt: at, UpdatedAt: at},
		New:          isNew,
		Messages: []chat.Message{
			{ID: qid, Role: chat.RoleUser, Content: question, Time: at},
			{ID: aid, Role: chat.RoleAssistant, Content: answer, Model: "qa", Time: at.Add(time.Second)},
		},
		Interaction: &in,
	}
	if err := h.s.RecordTurn(h.t.Context(), turn); err != nil {
		h.t.Fatalf("RecordTurn(%s): %v", id, err)
	}
	return turn
}

func (h *convHarness) total(cat string) int64 {
	h.t.Helper()
	c, err := h.counts.Answer(h.t.Context(), analytics.Query{Cat: cat, Range: analytics.Range{Start: c0.Add(-time.Hour), End: c0.Add(1000 * time.Hour)}}, analytics.PartTotal)
	if err != nil {
		h.t.Fatal(err)
	}
	return c.Total
}

func sameConversation(a, b chat.Conversation) bool {
	return a.ID == b.ID && a.Owner == b.Owner && a.Name == b.Name && a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt)
}

// sameMessages reports whether the messages read (a) are those written
// (b): the same ids, or any id where none was given.
func sameMessages(a, b []chat.Message) bool {
	return slices.EqualFunc(a, b, func(x, y chat.Message) bool {
		return (x.ID == y.ID || (y.ID == "" && x.ID != "")) && x.Role == y.Role && x.Content == y.Content && x.Model == y.Model && x.Time.Equal(y.Time) &&
			slices.Equal(x.ToolCalls, y.ToolCalls) && x.ToolCallID == y.ToolCallID && x.ToolName == y.ToolName &&
			x.Outcome == y.Outcome && x.Duration == y.Duration
	})
}

// testToolCallsRoundTrip stores an agent turn with two parallel tool
// calls (one with arguments that are not JSON, as a model may write them)
// and their results: they come back in order and in full, and a search
// for a tool's name finds the conversation with a snippet showing it.
func testToolCallsRoundTrip(t *testing.T, h *convHarness) {
	in := analytics.Interaction{
		Time: c0.Add(3 * time.Second), Cat: alice.Cat, EventKind: analytics.EventKindAPI, Question: "files?", Answer: "Two files.",
		Topic: "general", Model: "m", Persona: "default", UserID: alice.UserID, ConversationID: "agent",
	}
	turn := chat.Turn{
		Conversation: chat.Conversation{ID: "agent", Owner: alice, Name: "files?", CreatedAt: c0, UpdatedAt: c0},
		New:          true,
		Messages: []chat.Message{
			{ID: "u1", Role: chat.RoleUser, Content: "files?", Time: c0},
			{ID: "a1", Role: chat.RoleAssistant, Model: "m", Time: c0.Add(time.Second), ToolCalls: []chat.ToolCall{
				{ID: "call_1", Name: "files__list_dir", Arguments: `{"path":"/srv"}`},
				{ID: "call_2", Name: "knowledge_search", Arguments: `{"query": broken`},
			}},
			{ID: "t1", Role: chat.RoleTool, Content: "a.txt\nb.txt", Time: c0.Add(2 * time.Second), ToolCallID: "call_1",
				ToolName: "files__list_dir", Outcome: chat.OutcomeOK, Duration: 1500 * time.Microsecond},
			{ID: "t2", Role: chat.RoleTool, Content: "Error: the arguments are not a JSON object", Time: c0.Add(2 * time.Second),
				ToolCallID: "call_2", ToolName: "knowledge_search", Outcome: chat.OutcomeInvalid},
			{ID: "a2", Role: chat.RoleAssistant, Content: "Two files.", Model: "m", Time: c0.Add(3 * time.Second)},
		},
		Interaction: &in,
	}
	if err := h.s.RecordTurn(t.Context(), turn); err != nil {
		t.Fatal(err)
	}
	_, msgs, err := h.s.Conversation(t.Context(), alice, "agent")
	if err != nil {
		t.Fatal(err)
	}
	if !sameMessages(msgs, turn.Messages) {
		t.Fatalf("messages = %+v\nwant %+v", msgs, turn.Messages)
	}
	hits := h.search(alice, "list_dir", 10)
	if got := hitIDs(hits); !slices.Equal(got, []string{"agent"}) {
		t.Fatalf("search by tool name = %v, want [agent]", got)
	}
	if !strings.Contains(hits[0].Snippet, "list_dir") {
		t.Errorf("snippet %q does not show the tool", hits[0].Snippet)
	}
	if got := hitIDs(h.search(bob, "list_dir", 10)); len(got) != 0 {
		t.Errorf("another owner finds %v", got)
	}
}

func testRecordAndRead(t *testing.T, h *convHarness) {
	turn := h.turn(alice, "c1", "Refund question", true, c0, "Where is my refund?", "On its way.")
	got, msgs, err := h.s.Conversation(t.Context(), alice, "c1")
	if err != nil {
		t.Fatal(err)
	}
	want := turn.Conversation
	want.UpdatedAt = c0.Add(time.Second) // the last message's time
	if !sameConversation(got, want) || !sameMessages(msgs, turn.Messages) {
		t.Fatalf("Conversation = %+v %+v, want %+v %+v", got, msgs, want, turn.Messages)
	}
	if n := h.total("demo"); n != 1 {
		t.Fatalf("analytics counts %d interactions after one turn, want 1", n)
	}
}

func testAppendKeepsOrder(t *testing.T, h *convHarness) {
	first := h.turn(alice, "c1", "n", true, c0, "q1", "a1")
	second := h.turn(alice, "c1", "ignored", false, c0.Add(time.Minute), "q2", "a2")
	got, msgs, err := h.s.Conversation(t.Context(), alice, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if want := append(slices.Clone(first.Messages), second.Messages...); !sameMessages(msgs, want) {
		t.Fatalf("messages = %+v, want %+v", msgs, want)
	}
	if got.Name != "n" || !got.UpdatedAt.Equal(c0.Add(time.Minute+time.Second)) || !got.CreatedAt.Equal(c0) {
		t.Fatalf("conversation = %+v: want name n, created %v, updated at the last message", got, c0)
	}
	if n := h.total("demo"); n != 2 {
		t.Fatalf("analytics counts %d, want 2", n)
	}
}

func testForeignIsNotFound(t *testing.T, h *convHarness) {
	h.turn(alice, "c1", "n", true, c0, "q", "a")
	ctx := t.Context()
	for _, o := range []chat.Owner{bob, aliceElsewhere} {
		for name, err := range map[string]error{
			"Conversation": func() error { _, _, err := h.s.Conversation(ctx, o, "c1"); return err }(),
			"Rename":       func() error { _, err := h.s.RenameConversation(ctx, o, "c1", "x", c0); return err }(),
			"Delete":       h.s.DeleteConversation(ctx, o, "c1"),
			"RecordTurn": h.s.RecordTurn(ctx, chat.Turn{
				Conversation: chat.Conversation{ID: "c1", Owner: o},
				Messages:     []chat.Message{{Role: chat.RoleUser, Content: "sneaky", Time: c0}},
			}),
		} {
			if errs.KindOf(err) != errs.KindNotFound {
				t.Errorf("%s as %+v: %v, want not found", name, o, err)
			}
		}
	}
	if _, _, err := h.s.Conversation(ctx, alice, "nope"); errs.KindOf(err) != errs.KindNotFound {
		t.Errorf("unknown id: %v, want not found", err)
	}
	_, msgs, err := h.s.Conversation(ctx, alice, "c1")
	if err != nil || len(msgs) != 2 || msgs[0].Content != "q" {
		t.Fatalf("alice's conversation changed by others: %+v, %v", msgs, err)
	}
}

func testNewConflicts(t *testing.T, h *convHarness) {
	h.turn(alice, "c1", "n", true, c0, "q", "a")
	err := h.s.RecordTurn(t.Context(), chat.Turn{
		Conversation: chat.Conversation{ID: "c1", Owner: bob, Name: "m", CreatedAt: c0, UpdatedAt: c0},
		New:          true,
		Messages:     []chat.Message{{Role: chat.RoleUser, Content: "q", Time: c0}},
	})
	if errs.KindOf(err) != errs.KindConflict {
		t.Fatalf("second new c1: %v, want conflict", err)
	}
}

func testInvalidInteractionStoresNothing(t *testing.T, h *convHarness) {
	bad := analytics.Interaction{Time: c0, Cat: "demo", EventKind: analytics.EventKindAPI, Question: "q"} // no answer, topic...
	err := h.s.RecordTurn(t.Context(), chat.Turn{
		Conversation: chat.Conversation{ID: "c1", Owner: alice, Name: "n", CreatedAt: c0, UpdatedAt: c0},
		New:          true,
		Messages:     []chat.Message{{Role: chat.RoleUser, Content: "q", Time: c0}},
		Interaction:  &bad,
	})
	if errs.KindOf(err) != errs.KindInvalid {
		t.Fatalf("RecordTurn with an invalid interaction: %v, want invalid", err)
	}
	if _, _, err := h.s.Conversation(t.Context(), alice, "c1"); errs.KindOf(err) != errs.KindNotFound {
		t.Fatalf("conversation after a failed turn: %v, want not found", err)
	}
	if n := h.total("demo"); n != 0 {
		t.Fatalf("analytics counts %d after a failed turn", n)
	}
}

func testTurnWithoutInteraction(t *testing.T, h *convHarness) {
	err := h.s.RecordTurn(t.Context(), chat.Turn{
		Conversation: chat.Conversation{ID: "c1", Owner: alice, Name: "n", CreatedAt: c0, UpdatedAt: c0},
		New:          true,
		Messages:     []chat.Message{{Role: chat.RoleUser, Content: "kept although unanswered", Time: c0}},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, msgs, err := h.s.Conversation(t.Context(), alice, "c1")
	if err != nil || len(msgs) != 1 || msgs[0].Content != "kept although unanswered" {
		t.Fatalf("messages = %+v, %v", msgs, err)
	}
	if n := h.total("demo"); n != 0 {
		t.Fatalf("analytics counts %d for an unanswered turn, want 0", n)
	}
}

// testConversationWithoutMessages: a conversation created without
// messages reads back as itself, with none.
func testConversationWithoutMessages(t *testing.T, h *convHarness) {
	want := chat.Conversation{ID: "c1", Owner: alice, Name: "empty", CreatedAt: c0, UpdatedAt: c0}
	if err := h.s.RecordTurn(t.Context(), chat.Turn{Conversation: want, New: true}); err != nil {
		t.Fatal(err)
	}
	got, msgs, err := h.s.Conversation(t.Context(), alice, "c1")
	if err != nil || len(msgs) != 0 || !sameConversation(got, want) {
		t.Fatalf("conversation = %+v, messages %+v, %v; want %+v and none", got, msgs, err, want)
	}
}

func testListPages(t *testing.T, h *convHarness) {
	var ref []chat.Conversation
	for i := range 7 {
		at := c0.Add(time.Duration(i%3) * time.Hour) // ties on purpose
		turn := h.turn(alice, fmt.Sprintf("c%d", i), fmt.Sprintf("n%d", i), true, at, "q", "a")
		c := turn.Conversation
		c.UpdatedAt = at.Add(time.Second)
		ref = append(ref, c)
	}
	h.turn(bob, "b1", "bob's", true, c0.Add(5*time.Hour), "q", "a")
	for _, limit := range []int{0, 1, 3, 7, 100} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			page := chat.Page{Limit: limit}
			for range 10 {
				got, err := h.s.Conversations(t.Context(), alice, page)
				if err != nil {
					t.Fatal(err)
				}
				want, err := chat.ListPage(ref, alice, page)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.EqualFunc(got.Conversations, want.Conversations, sameConversation) || (got.Next == "") != (want.Next == "") {
					t.Fatalf("page %+v = %+v, want %+v", page, got, want)
				}
				if got.Next == "" {
					return
				}
				page.After = got.Next
			}
			t.Fatal("paging did not end")
		})
	}
	if _, err := h.s.Conversations(t.Context(), alice, chat.Page{After: "garbage!"}); errs.KindOf(err) != errs.KindInvalid {
		t.Fatalf("bad cursor: %v, want invalid", err)
	}
}

func testRename(t *testing.T, h *convHarness) {
	h.turn(alice, "c1", "Old title", true, c0, "hello", "hi")
	later := c0.Add(time.Hour)
	got, err := h.s.RenameConversation(t.Context(), alice, "c1", "Quarterly budget", later)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "Quarterly budget" || !got.UpdatedAt.Equal(later) {
		t.Fatalf("renamed = %+v", got)
	}
	if hits := h.search(alice, "budget", 10); len(hits) != 1 || hits[0].Conversation.ID != "c1" {
		t.Fatalf("search for the new name = %+v", hits)
	}
	if hits := h.search(alice, "old", 10); len(hits) != 0 {
		t.Fatalf("search for the old name = %+v, want none", hits)
	}
}

func testDelete(t *testing.T, h *convHarness) {
	h.turn(alice, "c1", "n", true, c0, "unicorn sighting", "a")
	h.turn(alice, "c2", "n", true, c0, "q", "a")
	if err := h.s.DeleteConversation(t.Context(), alice, "c1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.s.Conversation(t.Context(), alice, "c1"); errs.KindOf(err) != errs.KindNotFound {
		t.Fatalf("deleted conversation: %v, want not found", err)
	}
	if err := h.s.DeleteConversation(t.Context(), alice, "c1"); errs.KindOf(err) != errs.KindNotFound {
		t.Fatalf("second delete: %v, want not found", err)
	}
	page, err := h.s.Conversations(t.Context(), alice, chat.Page{})
	if err != nil || len(page.Conversations) != 1 || page.Conversations[0].ID != "c2" {
		t.Fatalf("list after delete = %+v, %v", page, err)
	}
	if hits := h.search(alice, "unicorn", 10); len(hits) != 0 {
		t.Fatalf("search finds a deleted conversation: %+v", hits)
	}
}

func (h *convHarness) search(o chat.Owner, q string, limit int) []chat.SearchHit {
	h.t.Helper()
	hits, err := h.s.SearchConversations(h.t.Context(), o, q, limit)
	if err != nil {
		h.t.Fatalf("SearchConversations(%q): %v", q, err)
	}
	return hits
}

func hitIDs(hits []chat.SearchHit) []string {
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.Conversation.ID)
	}
	return ids
}

func testSearchRanks(t *testing.T, h *convHarness) {
	h.turn(alice, "once", "Shipping", true, c0, "My parcel and a refund question", "We will check the parcel status for you today.")
	many := c0.Add(time.Hour)
	h.turn(alice, "many", "Refund", true, many, "Refund refund refund", "The refund was sent.")
	h.turn(alice, "none", "Weather", true, c0, "Is it raining", "No idea.")
	h.turn(bob, "bobs", "Refund", true, c0, "refund please", "ok")
	hits := h.search(alice, "REFUND", 10)
	if got := hitIDs(hits); !slices.Equal(got, []string{"many", "once"}) {
		t.Fatalf("search refund = %v, want [many once] (more mentions first, no other owner's)", got)
	}
	for _, hit := range hits {
		if !strings.Contains(strings.ToLower(hit.Snippet), "refund") {
			t.Errorf("snippet %q of %s does not show the match", hit.Snippet, hit.Conversation.ID)
		}
	}
	if hits[0].Conversation.Name != "Refund" || !hits[0].Conversation.UpdatedAt.Equal(many.Add(time.Second)) {
		t.Errorf("hit conversation = %+v", hits[0].Conversation)
	}
	if got := hitIDs(h.search(alice, "refund", 1)); len(got) != 1 {
		t.Errorf("limit 1 = %v", got)
	}
}

func testSearchAllTerms(t *testing.T, h *convHarness) {
	h.turn(alice, "both", "n", true, c0, "invoice for the refund", "ok")
	h.turn(alice, "split", "invoice", true, c0, "refund", "ok") // name and message together
	h.turn(alice, "one", "n", true, c0, "invoice only", "ok")
	got := hitIDs(h.search(alice, "refund invoice", 10))
	slices.Sort(got)
	if !slices.Equal(got, []string{"both", "split"}) {
		t.Fatalf("search refund invoice = %v, want both and split", got)
	}
}

func testSearchRejects(t *testing.T, h *convHarness) {
	for _, c := range []struct {
		q     string
		limit int
	}{{"", 10}, {"?!", 10}, {"ok", -1}, {"ok", chat.MaxLimit + 1}} {
		if _, err := h.s.SearchConversations(t.Context(), alice, c.q, c.limit); errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("SearchConversations(%q, %d) = %v, want invalid", c.q, c.limit, err)
		}
	}
}

// testDeleteConversationsOf erases alice's conversations in every CAT and
// leaves bob's exactly as they were, searchable; the interactions of the
// turns stay (they are the interaction eraser's). Deleting again deletes
// none.
func testDeleteConversationsOf(t *testing.T, h *convHarness) {
	ctx := t.Context()
	h.turn(alice, "a1", "Alice one", true, c0, "refund please", "sure")
	h.turn(alice, "a1", "", false, c0.Add(time.Minute), "refund again", "done")
	h.turn(aliceElsewhere, "a2", "Alice two", true, c0.Add(2*time.Minute), "refund elsewhere", "ok")
	h.turn(bob, "b1", "Bob one", true, c0.Add(3*time.Minute), "refund for bob", "fine")
	bobConv, bobMsgs, err := h.s.Conversation(ctx, bob, "b1")
	if err != nil {
		t.Fatal(err)
	}
	before := h.total("demo") + h.total("other")
	for user, want := range map[string][]string{"alice": {"demo", "other"}, "bob": {"demo"}, "nobody": {}} {
		if cats, err := h.s.ConversationCats(ctx, user); err != nil || !slices.Equal(cats, want) {
			t.Fatalf("ConversationCats(%s) = %v, %v; want %v", user, cats, err, want)
		}
	}
	n, err := h.s.DeleteConversationsOf(ctx, "alice")
	if err != nil || n != 2 {
		t.Fatalf("DeleteConversationsOf(alice) = %d, %v; want 2", n, err)
	}
	for _, o := range []struct {
		owner chat.Owner
		id    string
	}{{alice, "a1"}, {aliceElsewhere, "a2"}} {
		if _, _, err := h.s.Conversation(ctx, o.owner, o.id); errs.KindOf(err) != errs.KindNotFound {
			t.Fatalf("%s after erasure: %v, want not found", o.id, err)
		}
		page, err := h.s.Conversations(ctx, o.owner, chat.Page{})
		if err != nil || len(page.Conversations) != 0 {
			t.Fatalf("list of %v after erasure = %+v, %v", o.owner, page.Conversations, err)
		}
		if hits := h.search(o.owner, "refund", 10); len(hits) != 0 {
			t.Fatalf("search of %v after erasure = %v", o.owner, hitIDs(hits))
		}
	}
	c, msgs, err := h.s.Conversation(ctx, bob, "b1")
	if err != nil || !sameConversation(c, bobConv) || !sameMessages(msgs, bobMsgs) {
		t.Fatalf("bob's conversation after alice's erasure = %+v %+v, %v", c, msgs, err)
	}
	if hits := h.search(bob, "refund", 10); !slices.Equal(hitIDs(hits), []string{"b1"}) {
		t.Fatalf("bob's search after alice's erasure = %v", hitIDs(hits))
	}
	if cats, err := h.s.ConversationCats(ctx, "alice"); err != nil || len(cats) != 0 {
		t.Fatalf("ConversationCats(alice) after erasure = %v, %v", cats, err)
	}
	if after := h.total("demo") + h.total("other"); after != before {
		t.Fatalf("interactions %d -> %d: DeleteConversationsOf must not touch the log", before, after)
	}
	// A new conversation of alice's works after the erasure, and a second
	// erasure finds only it.
	h.turn(alice, "a3", "Alice again", true, c0.Add(4*time.Minute), "hello", "hi")
	if n, err := h.s.DeleteConversationsOf(ctx, "alice"); err != nil || n != 1 {
		t.Fatalf("second DeleteConversationsOf = %d, %v; want 1", n, err)
	}
	if n, err := h.s.DeleteConversationsOf(ctx, "alice"); err != nil || n != 0 {
		t.Fatalf("third DeleteConversationsOf = %d, %v; want 0", n, err)
	}
}

// testMessageIDs: messages keep the ids they are given, across turns and
// reads; a message given without one gets one, distinct from every
// other and the same at every read; an id no store can keep is invalid
// and stores nothing.
func testMessageIDs(t *testing.T, h *convHarness) {
	first := h.turn(alice, "c1", "n", true, c0, "q1", "a1")
	second := h.turn(alice, "c1", "", false, c0.Add(time.Minute), "q2", "a2")
	if err := h.s.RecordTurn(t.Context(), chat.Turn{
		Conversation: chat.Conversation{ID: "c1", Owner: alice},
		Messages: []chat.Message{
			{Role: chat.RoleUser, Content: "unnamed", Time: c0.Add(2 * time.Minute)},
			{Role: chat.RoleAssistant, Content: "unnamed too", Time: c0.Add(2 * time.Minute)},
		},
	}); err != nil {
		t.Fatal(err)
	}
	h.turn(alice, "c2", "other", true, c0, "q3", "a3")
	read := func(id string) []chat.Message {
		t.Helper()
		_, msgs, err := h.s.Conversation(t.Context(), alice, id)
		if err != nil {
			t.Fatal(err)
		}
		return msgs
	}
	msgs := read("c1")
	var given []string
	for _, m := range append(slices.Clone(first.Messages), second.Messages...) {
		given = append(given, m.ID)
	}
	if len(msgs) != 6 {
		t.Fatalf("%d messages, want 6", len(msgs))
	}
	seen := map[string]bool{}
	for _, m := range read("c2") {
		seen[m.ID] = true
	}
	for i, m := range msgs {
		if i < len(given) && m.ID != given[i] {
			t.Errorf("message %d has id %q, was given %q", i, m.ID, given[i])
		}
		if m.ID == "" || seen[m.ID] {
			t.Errorf("message %d has id %q: empty or not distinct", i, m.ID)
		}
		seen[m.ID] = true
	}
	again := read("c1")
	for i := range msgs {
		if again[i].ID != msgs[i].ID {
			t.Errorf("message %d read as %q, then %q", i, msgs[i].ID, again[i].ID)
		}
	}
	for name, id := range map[string]string{"NUL": "a\x00b", "not UTF-8": "\xff", "too long": strings.Repeat("x", chat.MaxMessageIDBytes+1)} {
		err := h.s.RecordTurn(t.Context(), chat.Turn{
			Conversation: chat.Conversation{ID: "c1", Owner: alice},
			Messages:     []chat.Message{{ID: id, Role: chat.RoleUser, Content: "bad id", Time: c0.Add(3 * time.Minute)}},
		})
		if errs.KindOf(err) != errs.KindInvalid {
			t.Errorf("message id %s: %v, want invalid", name, err)
		}
	}
	if n := len(read("c1")); n != 6 {
		t.Errorf("%d messages after refused turns, want 6", n)
	}
}
