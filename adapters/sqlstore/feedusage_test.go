package sqlstore_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

var _ colindex.Ratings = (*sqlstore.Store)(nil)

// usageLog is sampleLog with a usage and a feedback of its own on every
// row, a question unique to each row (feedKey finds it again) and an
// interaction id on every api row.
func usageLog(n, salt int, prefix string) []analytics.Interaction {
	in := sampleLog(n, salt)
	for k := range in {
		i := &in[k]
		i.Question = fmt.Sprintf("%s question %d?", prefix, k)
		i.InteractionID = fmt.Sprintf("%s-%d", prefix, k)
		i.Usage = analytics.Usage{InputTokens: int64(100 + k), OutputTokens: int64(7 * k), CostUSD: float64(k) * 0.00013}
		if k%3 != 0 {
			i.Usage.LatencyMS = analytics.MS(float64(40 * k))
		}
		switch k % 5 {
		case 1:
			i.Feedback = analytics.Feedback{Rating: analytics.RatingUp}
		case 2:
			i.Feedback = analytics.Feedback{Rating: analytics.RatingDown, Reason: "wrong"}
		}
	}
	return in
}

// feedFields is what a feed row says of an interaction, by value.
type feedFields struct {
	cat, topic, model, persona, qid, question, aid, answer string
	micros, in, out, cost                                  int64
	latency                                                int32
	rating                                                 uint8
}

func fieldsOfRow(r *analytics.FeedRow) feedFields {
	return feedFields{cat: string(r.Cat), topic: string(r.Topic), model: string(r.Model), persona: string(r.Persona),
		qid: string(r.QuestionID), question: string(r.Question), aid: string(r.AnswerID), answer: string(r.Answer),
		micros: r.Micros, in: r.InputTokens, out: r.OutputTokens, cost: r.CostNanos, latency: r.LatencyBucket, rating: r.Rating}
}

// fieldsOf is the feed row the reference expects of an api interaction.
func fieldsOf(i analytics.Interaction) feedFields {
	i = i.Normalize()
	f := feedFields{cat: i.Cat, topic: i.Topic, model: i.Model, persona: i.Persona, qid: i.QuestionID, question: i.Question,
		aid: i.AnswerID, answer: i.Answer, micros: i.Time.UnixMicro(), in: i.Usage.InputTokens, out: i.Usage.OutputTokens,
		cost: analytics.CostNanos(i.Usage.CostUSD), rating: analytics.RatingCode(i.Feedback.Rating)}
	if i.Usage.LatencyMS != nil {
		f.latency = int32(analytics.LatencyBucket(*i.Usage.LatencyMS)) + 1
	}
	return f
}

// expectedFeed is the sorted feed rows of the api interactions of in
// (of one CAT unless cat is "").
func expectedFeed(in []analytics.Interaction, cat string) []feedFields {
	var out []feedFields
	for _, i := range in {
		if i.Counted() && (cat == "" || i.Cat == cat) {
			out = append(out, fieldsOf(i))
		}
	}
	sortFields(out)
	return out
}

func sortFields(f []feedFields) {
	slices.SortFunc(f, func(a, b feedFields) int { return strings.Compare(a.question, b.question) })
}

// readFeedAll reads the whole feed from 0 and returns its rows and the
// position after them.
func readFeedAll(t *testing.T, s *sqlstore.Store) ([]feedFields, int64) {
	t.Helper()
	var out []feedFields
	pos, err := s.ReadSince(t.Context(), 0, func(r *analytics.FeedRow) error {
		out = append(out, fieldsOfRow(r))
		return nil
	})
	if err != nil {
		t.Fatalf("ReadSince: %v", err)
	}
	sortFields(out)
	return out, pos
}

func collect(t *testing.T, name string, read func(fn func(*analytics.FeedRow) error) error) []feedFields {
	t.Helper()
	var out []feedFields
	if err := read(func(r *analytics.FeedRow) error {
		out = append(out, fieldsOfRow(r))
		return nil
	}); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	sortFields(out)
	return out
}

func expectFields(t *testing.T, name string, got, want []feedFields) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, want %d", name, len(got), len(want))
		return
	}
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("%s: row %d = %+v, want %+v", name, k, got[k], want[k])
			return
		}
	}
}

// withoutRatings is the rows with Rating 0, as the snapshot gives them.
func withoutRatings(in []feedFields) []feedFields {
	out := slices.Clone(in)
	for k := range out {
		out[k].rating = 0
	}
	return out
}

// expectSnapshotIsFeed checks that the snapshot gives the feed's rows,
// usage included, without their ratings.
func expectSnapshotIsFeed(t *testing.T, s *sqlstore.Store, want []feedFields) {
	t.Helper()
	snap := collect(t, "ReadSnapshot", func(fn func(*analytics.FeedRow) error) error {
		_, _, err := s.ReadSnapshot(t.Context(), fn)
		return err
	})
	expectFields(t, "snapshot", snap, withoutRatings(want))
}

// TestFeedCarriesUsageAndRating writes rows through Append, the importer
// (Load) and WriteTx, and expects the feed, ReadCat and the snapshot to
// give each api row's usage, and the feed and ReadCat its rating.
func TestFeedCarriesUsageAndRating(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			s := openStore(t, b.DSN(t))
			appended, loaded, turned := usageLog(90, 3, "append"), usageLog(80, 5, "load"), usageLog(12, 7, "turn")
			mustAppend(t, s, appended)
			if n, err := s.Load(t.Context(), analytics.Each(loaded)); err != nil || n != len(loaded) {
				t.Fatalf("Load = %d, %v; want %d", n, err, len(loaded))
			}
			if err := s.WriteTx(t.Context(), func(ctx context.Context, tx bun.Tx) error {
				return s.AppendTx(ctx, tx, turned)
			}); err != nil {
				t.Fatalf("WriteTx: %v", err)
			}
			all := slices.Concat(appended, loaded, turned)
			want := expectedFeed(all, "")
			if len(want) == 0 || want[0].in == 0 {
				t.Fatal("the sample has no api rows with usage")
			}
			got, pos := readFeedAll(t, s)
			expectFields(t, "feed", got, want)
			for _, cat := range []string{"alpha", "beta"} {
				got := collect(t, "ReadCat", func(fn func(*analytics.FeedRow) error) error {
					return s.ReadCat(t.Context(), cat, pos, fn)
				})
				expectFields(t, "ReadCat "+cat, got, expectedFeed(all, cat))
			}
			expectSnapshotIsFeed(t, s, want)
		})
	}
}

// TestRatingFeed sets feedback and expects the rating feed to report the
// CATs whose api rows' ratings changed, in growing generations, and
// nothing for a feedback that changes no rating; ReadRated gives exactly
// the rated rows the feed had given by its position, keys in place of
// texts and without usage.
func TestRatingFeed(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			s := openStore(t, b.DSN(t))
			in := usageLog(40, 1, "first")
			mustAppend(t, s, in)
			_, pos := readFeedAll(t, s)
			changes := func(after int64) (int64, []string) {
				t.Helper()
				gen, cats, err := s.ReadRatingChanges(t.Context(), after)
				if err != nil {
					t.Fatalf("ReadRatingChanges(%d): %v", after, err)
				}
				return gen, cats
			}
			set := func(cat, id string, f analytics.Feedback) {
				t.Helper()
				if err := s.SetFeedback(t.Context(), cat, id, f); err != nil {
					t.Fatalf("SetFeedback(%s, %s): %v", cat, id, err)
				}
				for k := range in {
					if in[k].Cat == cat && in[k].InteractionID == id {
						in[k].Feedback = f
					}
				}
			}
			expectRated := func(name string, upTo int64, ref []analytics.Interaction) {
				t.Helper()
				for _, cat := range []string{"alpha", "beta"} {
					got := collect(t, "ReadRated", func(fn func(*analytics.FeedRow) error) error {
						return s.ReadRated(t.Context(), cat, upTo, fn)
					})
					want := slices.DeleteFunc(expectedFeed(ref, cat), func(f feedFields) bool { return f.rating == 0 })
					for k := range want { // keys in place of texts, no usage
						want[k].question, want[k].answer = want[k].qid, want[k].aid
						want[k].in, want[k].out, want[k].cost, want[k].latency = 0, 0, 0, 0
					}
					sortFields(want)
					if len(want) == 0 {
						t.Fatalf("%s: no rated rows of %s to expect", name, cat)
					}
					expectFields(t, name+" ReadRated "+cat, got, want)
				}
			}

			gen0, cats := changes(0)
			if gen0 != 0 || len(cats) != 0 {
				t.Fatalf("before any feedback: generation %d, CATs %v; want 0 and none", gen0, cats)
			}
			expectRated("as appended", pos, in)

			// in[0] (alpha, api) has no rating, in[1] (beta, api) up.
			set("alpha", in[0].InteractionID, analytics.Feedback{Rating: analytics.RatingDown})
			gen1, cats := changes(gen0)
			if gen1 <= gen0 || !slices.Equal(cats, []string{"alpha"}) {
				t.Fatalf("after rating an alpha row: generation %d (from %d), CATs %v", gen1, gen0, cats)
			}
			// The same rating again, or another reason only: no change.
			set("alpha", in[0].InteractionID, analytics.Feedback{Rating: analytics.RatingDown})
			set("alpha", in[0].InteractionID, analytics.Feedback{Rating: analytics.RatingDown, Reason: "other"})
			if gen, cats := changes(gen1); gen != gen1 || len(cats) != 0 {
				t.Fatalf("after feedback that kept the rating: generation %d (want %d), CATs %v", gen, gen1, cats)
			}
			// A feedback row (in[3], not counted) is no row of the feed.
			if in[3].Counted() {
				t.Fatal("in[3] should be a feedback event")
			}
			set(in[3].Cat, in[3].InteractionID, analytics.Feedback{Rating: analytics.RatingUp})
			if gen, cats := changes(gen1); gen != gen1 || len(cats) != 0 {
				t.Fatalf("after rating a non-api row: generation %d (want %d), CATs %v", gen, gen1, cats)
			}
			// Clearing a rating and rating both CATs' rows: changes.
			set("beta", in[1].InteractionID, analytics.Feedback{})
			set("alpha", in[2].InteractionID, analytics.Feedback{Rating: analytics.RatingUp})
			gen2, cats := changes(gen1)
			if gen2 <= gen1 || !slices.Equal(cats, []string{"alpha", "beta"}) {
				t.Fatalf("after changing alpha and beta: generation %d (from %d), CATs %v", gen2, gen1, cats)
			}
			if err := s.SetFeedback(t.Context(), "alpha", "no such id", analytics.Feedback{Rating: analytics.RatingUp}); errs.KindOf(err) != errs.KindNotFound {
				t.Fatalf("SetFeedback of an unknown id: %v, want not found", err)
			}
			if gen, _ := changes(gen2); gen != gen2 {
				t.Fatalf("a failed SetFeedback moved the generation to %d from %d", gen, gen2)
			}
			expectRated("after feedback", pos, in)

			// Rows committed after the position are not given by it.
			more := usageLog(20, 9, "second")
			mustAppend(t, s, more)
			expectRated("by the old position", pos, in)
			next, err := s.ReadSince(t.Context(), pos, func(*analytics.FeedRow) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			expectRated("by the new position", next, slices.Concat(in, more))
			if err := s.ReadRated(t.Context(), "alpha", 0, func(*analytics.FeedRow) error {
				return fmt.Errorf("a row by position 0")
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestMigrationRebuildsBlocksWithUsage opens a database whose blocks are
// in the layout before usage (version 8) and expects the migration to
// rebuild them: the snapshot gives every row's usage, and the raw pass
// still counts exactly.
func TestMigrationRebuildsBlocksWithUsage(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			dsn := b.DSN(t)
			old, err := sqlstore.OpenAtVersion(t.Context(), dsn, 8)
			if err != nil {
				t.Fatalf("open at version 8: %v", err)
			}
			in := usageLog(150, 2, "old")
			if _, err := old.Append(t.Context(), analytics.Each(in)); err != nil {
				t.Fatal(err)
			}
			if err := sqlstore.StripBlockUsage(t.Context(), old); err != nil {
				t.Fatalf("strip usage from the blocks: %v", err)
			}
			if err := old.Close(); err != nil {
				t.Fatal(err)
			}
			s := openStore(t, dsn)
			want := expectedFeed(in, "")
			got, _ := readFeedAll(t, s)
			expectFields(t, "feed", got, want)
			expectSnapshotIsFeed(t, s, want)
			expectMatchesReference(t, "rebuilt blocks", s, normalized(in))
		})
	}
}

// TestRatingFollowerUnderConcurrentFeedback sets feedback from several
// goroutines while a follower polls the rating feed the way the index
// does (the generation first, then each reported CAT's rated rows), and
// expects it to end with every row's rating: a change whose generation
// committed after a higher one was read would be missed.
func TestRatingFollowerUnderConcurrentFeedback(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			s := openStore(t, b.DSN(t))
			in := usageLog(120, 4, "c")
			var ids [][2]string
			for k := range in {
				in[k].Feedback = analytics.Feedback{}
				if in[k].Counted() {
					ids = append(ids, [2]string{in[k].Cat, in[k].InteractionID})
				}
			}
			mustAppend(t, s, in)
			_, pos := readFeedAll(t, s)

			rated := map[string]map[string]uint8{} // the follower's: CAT, question id
			var gen int64
			poll := func() {
				next, cats, err := s.ReadRatingChanges(t.Context(), gen)
				if err != nil {
					t.Errorf("ReadRatingChanges: %v", err)
					return
				}
				for _, cat := range cats {
					m := map[string]uint8{}
					if err := s.ReadRated(t.Context(), cat, pos, func(r *analytics.FeedRow) error {
						m[string(r.QuestionID)] = r.Rating
						return nil
					}); err != nil {
						t.Errorf("ReadRated: %v", err)
						return
					}
					rated[cat] = m
				}
				gen = next
			}

			ratings := []analytics.Feedback{{Rating: analytics.RatingUp}, {Rating: analytics.RatingDown}, {}}
			done := make(chan error, 4)
			for w := range 4 {
				go func() {
					var err error
					for n := range 40 {
						id := ids[(w*37+n*11)%len(ids)]
						if err = s.SetFeedback(t.Context(), id[0], id[1], ratings[(w+n)%3]); err != nil {
							break
						}
					}
					done <- err
				}()
			}
			for running := 4; running > 0; {
				select {
				case err := <-done:
					if err != nil {
						t.Errorf("SetFeedback: %v", err)
					}
					running--
				default:
					poll()
				}
			}
			// The writers' order decides which ratings stay: one rating per
			// CAT set last keeps each CAT with rated rows to compare.
			for _, cat := range []string{"alpha", "beta"} {
				for _, id := range ids {
					if id[0] == cat {
						if err := s.SetFeedback(t.Context(), cat, id[1], analytics.Feedback{Rating: analytics.RatingUp}); err != nil {
							t.Fatal(err)
						}
						break
					}
				}
			}
			poll()

			for _, cat := range []string{"alpha", "beta"} {
				want := map[string]uint8{}
				if err := s.ReadCat(t.Context(), cat, pos, func(r *analytics.FeedRow) error {
					if r.Rating != 0 {
						want[string(r.QuestionID)] = r.Rating
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if len(want) == 0 {
					t.Fatalf("no rated rows of %s at the end", cat)
				}
				if got := rated[cat]; len(got) != len(want) {
					t.Errorf("%s: the follower has %d rated rows, the store %d", cat, len(got), len(want))
				} else {
					for q, r := range want {
						if got[q] != r {
							t.Errorf("%s %q: the follower has rating %d, the store %d", cat, q, got[q], r)
						}
					}
				}
			}
		})
	}
}

// TestRatedRowsOfLargestFields rates interactions whose keys are as long
// as fields may be, and incompressible, appended rated and rated later,
// and expects ReadRated to give both: an index holding the keys would
// refuse them on PostgreSQL (a B-tree entry holds at most about 2.7 kB).
func TestRatedRowsOfLargestFields(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			// A source per subtest: the subtests run at once.
			rng := rand.New(rand.NewPCG(7, 29))
			long := func() string {
				b := make([]byte, analytics.MaxFieldBytes/2)
				for k := range b {
					b[k] = byte(rng.Uint32())
				}
				return hex.EncodeToString(b)
			}
			s := openStore(t, b.DSN(t))
			in := usageLog(5, 3, "long")
			for _, k := range []int{0, 1} { // in[1] comes rated, in[0] is rated below
				in[k].Cat = "alpha"
				in[k].Topic, in[k].Model, in[k].Persona = long(), long(), long()
				in[k].QuestionID, in[k].AnswerID = long(), long()
			}
			mustAppend(t, s, in)
			if err := s.SetFeedback(t.Context(), "alpha", in[0].InteractionID, analytics.Feedback{Rating: analytics.RatingDown}); err != nil {
				t.Fatalf("SetFeedback: %v", err)
			}
			in[0].Feedback = analytics.Feedback{Rating: analytics.RatingDown}
			_, pos := readFeedAll(t, s)
			got := collect(t, "ReadRated", func(fn func(*analytics.FeedRow) error) error {
				return s.ReadRated(t.Context(), "alpha", pos, fn)
			})
			longest := 0
			for _, f := range got {
				if len(f.qid) == analytics.MaxFieldBytes {
					longest++
				}
			}
			if longest != 2 {
				t.Errorf("ReadRated gave %d of the 2 rated rows of longest keys (%d rows in all)", longest, len(got))
			}
		})
	}
}
