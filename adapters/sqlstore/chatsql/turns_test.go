package chatsql_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

var (
	alice = chat.Owner{Cat: "demo", UserID: "alice"}
	t0    = time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	// all is whole UTC days, as rollups need.
	all = analytics.Selection{Cat: "demo", Range: analytics.Range{Start: t0.Truncate(24 * time.Hour), End: t0.Truncate(24 * time.Hour).Add(48 * time.Hour)}}
)

// turnOf is a turn of alice's conversation id at `at`, answered by model.
func turnOf(id string, isNew bool, at time.Time, question, answer, topic string) chat.Turn {
	in := analytics.Interaction{
		Time: at.Add(time.Second), Cat: alice.Cat, EventKind: analytics.EventKindAPI, Question: question, Answer: answer,
		Topic: topic, Model: "qa", Persona: "default", UserID: alice.UserID, ConversationID: id,
	}
	return chat.Turn{
		Conversation: chat.Conversation{ID: id, Owner: alice, Name: chat.NameFrom(question), CreatedAt: at, UpdatedAt: at},
		New:          isNew,
		Messages: []chat.Message{
			{Role: chat.RoleUser, Content: question, Time: at},
			{Role: chat.RoleAssistant, Content: answer, Model: "qa", Time: at.Add(time.Second)},
		},
		Interaction: &in,
	}
}

// checkCounts compares the raw log and the rollups with the reference
// over the interactions the turns carried.
func checkCounts(t *testing.T, log *sqlstore.Store, want []analytics.Interaction) {
	t.Helper()
	ref := make([]analytics.Interaction, len(want))
	for i, in := range want {
		ref[i] = in.Normalize()
	}
	for name, agg := range map[string]ports.Aggregator{"raw": log, "rollups": log.Rollups()} {
		a, err := agg.Answer(t.Context(), analytics.Query{Cat: all.Cat, Range: all.Range, Filters: all.Filters}, analytics.AllParts)
		if err != nil {
			t.Fatal(err)
		}
		if wantN := analytics.CountTotal(ref, all); a.Total != wantN {
			t.Errorf("%s total = %d, want %d", name, a.Total, wantN)
		}
		for _, d := range analytics.Dimensions {
			got := a.Groups[d]
			wantG := analytics.CountGroups(ref, all, d)
			// Lists are ordered by whoever presents them.
			analytics.SortGroups(got)
			analytics.SortGroups(wantG)
			if !slices.Equal(got, wantG) {
				t.Errorf("%s groups of %v = %+v, want %+v", name, d, got, wantG)
			}
		}
	}
}

// failInteractions makes every insert into the interactions table fail,
// so a turn fails after its conversation and messages were written.
func failInteractions(t *testing.T, log *sqlstore.Store) {
	t.Helper()
	stmts := []string{`CREATE TRIGGER fail_interactions BEFORE INSERT ON interactions BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`}
	if log.Dialect() == sqlstore.DialectPostgres {
		stmts = []string{
			`CREATE FUNCTION fail_interactions() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`,
			`CREATE TRIGGER fail_interactions BEFORE INSERT ON interactions FOR EACH ROW EXECUTE FUNCTION fail_interactions()`,
		}
	}
	for _, stmt := range stmts {
		if _, err := log.DB().ExecContext(t.Context(), stmt); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTurnFeedsAnalytics(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			dsn := b.DSN(t)
			log, s := open(t, dsn)
			idx, err := colindex.Build(t.Context(), log)
			if err != nil {
				t.Fatal(err)
			}
			told := 0
			log.TellCommits(func(rows []analytics.FeedRow, givenAt int64, complete bool) {
				told++
				if !complete || len(rows) != 1 {
					t.Errorf("told of %d rows (complete %v), want the turn's one", len(rows), complete)
				}
				idx.Hold(rows, givenAt, complete)
			})
			turns := []chat.Turn{
				turnOf("c1", true, t0, "Where is my refund?", "On its way.", "billing"),
				turnOf("c1", false, t0.Add(time.Minute), "And my invoice?", "Sent.", "billing"),
				turnOf("c2", true, t0.Add(time.Hour), "hello", "Hi!", "general"),
			}
			var want []analytics.Interaction
			for _, turn := range turns {
				if err := s.RecordTurn(t.Context(), turn); err != nil {
					t.Fatal(err)
				}
				want = append(want, *turn.Interaction)
				checkCounts(t, log, want)
				// The index was told of the commit, with no refresh or poll.
				if a, err := idx.Answer(t.Context(), analytics.Query{Cat: all.Cat, Range: all.Range}, analytics.PartTotal); err != nil || a.Total != int64(len(want)) {
					t.Fatalf("column index total = %d, %v; want %d", a.Total, err, len(want))
				}
			}
			unanswered := turnOf("c1", false, t0.Add(2*time.Hour), "still there?", "", "")
			unanswered.Messages, unanswered.Interaction = unanswered.Messages[:1], nil
			if err := s.RecordTurn(t.Context(), unanswered); err != nil {
				t.Fatal(err)
			}
			if told != len(turns) {
				t.Errorf("told of %d commits for %d answered turns and one unanswered", told, len(turns))
			}
			checkCounts(t, log, want)
		})
	}
}

func TestFailedTurnStoresNothing(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			log, s := open(t, b.DSN(t))
			told := 0
			log.TellCommits(func([]analytics.FeedRow, int64, bool) { told++ })
			first := turnOf("c1", true, t0, "Where is my refund?", "On its way.", "billing")
			if err := s.RecordTurn(t.Context(), first); err != nil {
				t.Fatal(err)
			}
			before, beforeMsgs, err := s.Conversation(t.Context(), alice, "c1")
			if err != nil {
				t.Fatal(err)
			}
			failInteractions(t, log)
			for name, turn := range map[string]chat.Turn{
				"existing": turnOf("c1", false, t0.Add(time.Hour), "zebra crossing", "Look both ways.", "general"),
				"new":      turnOf("c2", true, t0.Add(time.Hour), "zebra stripes", "Black and white.", "general"),
			} {
				if err := s.RecordTurn(t.Context(), turn); errs.KindOf(err) != errs.KindInternal {
					t.Fatalf("%s turn with a failing interaction insert: %v, want an internal error", name, err)
				}
			}
			after, afterMsgs, err := s.Conversation(t.Context(), alice, "c1")
			if err != nil {
				t.Fatal(err)
			}
			if after != before || len(afterMsgs) != len(beforeMsgs) {
				t.Fatalf("c1 after failed turns = %+v with %d messages, want %+v with %d", after, len(afterMsgs), before, len(beforeMsgs))
			}
			if _, _, err := s.Conversation(t.Context(), alice, "c2"); errs.KindOf(err) != errs.KindNotFound {
				t.Fatalf("c2 after its failed turn: %v, want not found", err)
			}
			if hits, err := s.SearchConversations(t.Context(), alice, "zebra", 10); err != nil || len(hits) != 0 {
				t.Fatalf("search finds the failed turns' text: %+v, %v", hits, err)
			}
			if told != 1 {
				t.Errorf("told of %d commits, want one (failed turns commit nothing)", told)
			}
			checkCounts(t, log, []analytics.Interaction{*first.Interaction})
		})
	}
}

func TestSearchQueriesStayWords(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			_, s := open(t, b.DSN(t))
			if err := s.RecordTurn(t.Context(), turnOf("c1", true, t0, "NEAR the refund desk, AND OR NOT", "Ask at the counter.", "billing")); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				q    string
				hits int
			}{
				{`refund*`, 1},
				{`NEAR(refund desk)`, 1},
				{`"refund`, 1},
				{`name:refund`, 0}, // "name" is a word here, not a column filter
				{`body:counter`, 0},
				{`refund OR zebra`, 0}, // every word is required, OR included
				{`desk AND NOT`, 1},
				{`^refund -desk +counter`, 1},
				{`{name body}: refund`, 0},
			} {
				hits, err := s.SearchConversations(t.Context(), alice, c.q, 10)
				if err != nil {
					t.Errorf("search %q: %v", c.q, err)
					continue
				}
				if len(hits) != c.hits {
					t.Errorf("search %q = %d hits, want %d", c.q, len(hits), c.hits)
				}
			}
		})
	}
}

// TestSearchFindsCoreWords: both databases find the words chat.Tokens
// finds, where their own parsers would see other tokens (an e-mail
// address, a version number, vowel signs).
func TestSearchFindsCoreWords(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			_, s := open(t, b.DSN(t))
			if err := s.RecordTurn(t.Context(), turnOf("c1", true, t0, "Write to bob@example.com about v2.1", "नमस्ते दुनिया, café ready", "general")); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"example com", "bob@example.com", "v2 1", "नमस्ते", "दुनिया", "CAFÉ", "write ready"} {
				hits, err := s.SearchConversations(t.Context(), alice, q, 10)
				if err != nil || len(hits) != 1 {
					t.Errorf("search %q = %+v, %v; want the conversation", q, hits, err)
				}
			}
			for _, q := range []string{"cafe", "exam", "v3"} {
				hits, err := s.SearchConversations(t.Context(), alice, q, 10)
				if err != nil || len(hits) != 0 {
					t.Errorf("search %q = %+v, %v; want none", q, hits, err)
				}
			}
		})
	}
}

// TestConcurrentTurns: turns racing on one conversation each keep both
// their messages and their interaction.
func TestConcurrentTurns(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			log, s := open(t, b.DSN(t))
			first := turnOf("c1", true, t0, "first", "answer", "general")
			if err := s.RecordTurn(t.Context(), first); err != nil {
				t.Fatal(err)
			}
			const n = 8
			turns := make([]chat.Turn, n)
			errc := make(chan error, n)
			for i := range n {
				turns[i] = turnOf("c1", false, t0.Add(time.Duration(i+1)*time.Minute), fmt.Sprintf("question %d", i), "answer", "general")
				go func() { errc <- s.RecordTurn(t.Context(), turns[i]) }()
			}
			want := []analytics.Interaction{*first.Interaction}
			for range n {
				if err := <-errc; err != nil {
					t.Fatal(err)
				}
			}
			for _, turn := range turns {
				want = append(want, *turn.Interaction)
			}
			_, msgs, err := s.Conversation(t.Context(), alice, "c1")
			if err != nil || len(msgs) != 2*(n+1) {
				t.Fatalf("%d messages, %v; want %d", len(msgs), err, 2*(n+1))
			}
			checkCounts(t, log, want)
		})
	}
}
