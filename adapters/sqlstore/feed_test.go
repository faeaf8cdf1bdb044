package sqlstore_test

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/core/analytics"
)

// follower reads a feed the way the column index does: from the position
// the previous read returned, counting how often it was given each id.
type follower struct {
	feed colindex.Feed
	pos  int64
	seen map[int64]int
}

func newFollower(feed colindex.Feed) *follower {
	return &follower{feed: feed, seen: map[int64]int{}}
}

func (f *follower) read(t *testing.T) {
	t.Helper()
	next, err := f.feed.ReadSince(t.Context(), f.pos, func(r *analytics.FeedRow) error {
		f.seen[r.ID]++
		return nil
	})
	if err != nil {
		t.Fatalf("ReadSince(%d): %v", f.pos, err)
	}
	if next < f.pos {
		t.Fatalf("ReadSince(%d) moved back to %d", f.pos, next)
	}
	f.pos = next
}

// expectExactlyOnce checks that the follower was given every committed
// api row once, and nothing else.
func (f *follower) expectExactlyOnce(t *testing.T, s *sqlstore.Store) {
	t.Helper()
	ids := apiIDs(t, s)
	for _, id := range ids {
		if n := f.seen[id]; n != 1 {
			t.Errorf("row %d was read %d times, want once", id, n)
		}
	}
	if len(f.seen) != len(ids) {
		t.Errorf("the follower read %d distinct rows, the log holds %d api rows", len(f.seen), len(ids))
	}
}

// apiIDs lists the ids of the committed api rows.
func apiIDs(t *testing.T, s *sqlstore.Store) []int64 {
	t.Helper()
	var ids []int64
	if err := s.DB().NewSelect().TableExpr("interactions").Column("id").
		Where("event_kind = ?", analytics.EventKindAPI).Scan(t.Context(), &ids); err != nil {
		t.Fatal(err)
	}
	return ids
}

// heldTurn is a WriteTx that stores its interactions and then holds its
// transaction open until release is closed.
type heldTurn struct {
	closeOnce func()
	inserted  chan struct{}
	release   chan struct{}
	done      chan error
}

func holdTurn(t *testing.T, s *sqlstore.Store, in []analytics.Interaction) *heldTurn {
	h := &heldTurn{inserted: make(chan struct{}), release: make(chan struct{}), done: make(chan error, 1)}
	// Ends the transaction before the test's schema is dropped, should
	// the test stop early.
	var closing sync.Once
	h.closeOnce = func() { closing.Do(func() { close(h.release) }) }
	t.Cleanup(h.closeOnce)
	go func() {
		once := sync.Once{}
		h.done <- s.WriteTx(context.Background(), func(ctx context.Context, tx bun.Tx) error {
			if err := s.AppendTx(ctx, tx, in); err != nil {
				return err
			}
			once.Do(func() { close(h.inserted) })
			<-h.release
			return nil
		})
	}()
	return h
}

// waitInserted waits until the turn has stored its rows and holds its
// transaction open.
func (h *heldTurn) waitInserted(t *testing.T) {
	t.Helper()
	select {
	case <-h.inserted:
	case err := <-h.done:
		t.Fatalf("held turn ended before it held: %v", err)
	}
}

func (h *heldTurn) commit(t *testing.T) {
	t.Helper()
	h.closeOnce()
	if err := <-h.done; err != nil {
		t.Fatalf("held turn: %v", err)
	}
}

func turn(t *testing.T, s *sqlstore.Store, in []analytics.Interaction) {
	t.Helper()
	if err := s.WriteTx(t.Context(), func(ctx context.Context, tx bun.Tx) error {
		return s.AppendTx(ctx, tx, in)
	}); err != nil {
		t.Fatalf("turn: %v", err)
	}
}

// apiOnly keeps the api interactions of the log (rows sampleLog makes
// are every fourth a feedback event).
func apiOnly(in []analytics.Interaction) []analytics.Interaction {
	var out []analytics.Interaction
	for _, i := range in {
		if i.Counted() {
			out = append(out, i)
		}
	}
	return out
}

// TestFeedOutOfOrderCommits: on PostgreSQL writers commit concurrently,
// so a row with a low id can commit after rows with higher ids. Two turns
// take low ids and stay open while later turns commit; a follower of the
// feed (and the column index over it) reading between every step is
// given each committed row exactly once, the late ones included, and the
// index counts exactly the reference.
func TestFeedOutOfOrderCommits(t *testing.T) {
	t.Parallel() // own stores only
	s := openStore(t, sqltest.PostgresDSN(t))
	f := newFollower(s)
	idx, err := colindex.Build(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	log := apiOnly(sampleLog(40, 3))
	// The open turns write a topic, questions and answers no other turn
	// writes, so no one waits for their dictionary entries or their
	// rollup rows (which they hold until they commit).
	for k := range 7 {
		if k < 2 || k >= 5 {
			log[k].Topic = fmt.Sprintf("held topic %d", k)
			log[k].Question = fmt.Sprintf("held question %d?", k)
			log[k].Answer = fmt.Sprintf("held answer %d.", k)
		}
	}
	var committed []analytics.Interaction
	step := func() {
		t.Helper()
		f.read(t)
		if err := idx.Refresh(t.Context()); err != nil {
			t.Fatal(err)
		}
	}

	// The other turns' topics, models and personas are in the
	// dictionaries from here on: a turn adding a new entry holds it until
	// it commits.
	turn(t, s, log[12:20])
	committed = append(committed, log[12:20]...)
	step()

	first := holdTurn(t, s, log[0:2]) // the lowest ids after the first turn's
	first.waitInserted(t)
	turn(t, s, log[2:5])
	committed = append(committed, log[2:5]...)
	second := holdTurn(t, s, log[5:7])
	second.waitInserted(t)
	turn(t, s, log[7:10])
	committed = append(committed, log[7:10]...)
	step()

	// The open turns hold lower ids than committed ones: a follower
	// that remembered the highest id it saw would skip them for good.
	ids := apiIDs(t, s)
	if len(ids) != 14 {
		t.Fatalf("%d api rows committed, want 14", len(ids))
	}
	slices.Sort(ids)
	if gaps := ids[len(ids)-1] - ids[0] + 1 - int64(len(ids)); gaps != 4 {
		t.Fatalf("the committed ids %v leave %d gaps, want the 4 ids of the open turns", ids, gaps)
	}

	first.commit(t)
	committed = append(committed, log[0:2]...)
	step()
	turn(t, s, log[10:12])
	committed = append(committed, log[10:12]...)
	step()
	second.commit(t)
	committed = append(committed, log[5:7]...)
	step()
	step() // nothing new: nothing repeated

	f.expectExactlyOnce(t, s)
	if len(f.seen) != len(committed) {
		t.Errorf("the follower read %d rows, %d were committed", len(f.seen), len(committed))
	}
	if rows, _ := idx.Stats(); rows != len(committed) {
		t.Errorf("the index holds %d rows, want %d", rows, len(committed))
	}
	expectMatchesReference(t, "index", idx, normalized(committed))
	expectMatchesReference(t, "raw", s, normalized(committed))
}

// TestWriteTxCommitsWhileAnImportIsOpen: PostgreSQL writers take no
// common lock, so a chat turn commits at once while an import's
// transaction is open; the import's rows reach the follower once it
// commits.
func TestWriteTxCommitsWhileAnImportIsOpen(t *testing.T) {
	t.Parallel() // own stores only
	s := openStore(t, sqltest.PostgresDSN(t))
	f := newFollower(s)
	log := sampleLog(3000, 5)
	half := make(chan struct{})
	finish := make(chan struct{})
	imported := make(chan error, 1)
	go func() {
		seq := func(yield func(analytics.Interaction, error) bool) {
			for k, i := range log[:2000] {
				if k == 1500 {
					close(half)
					<-finish
				}
				if !yield(i, nil) {
					return
				}
			}
		}
		_, err := s.Load(context.Background(), iter.Seq2[analytics.Interaction, error](seq))
		imported <- err
	}()
	<-half
	for k := range 20 {
		turn(t, s, log[2000+k:2001+k])
	}
	f.read(t)
	close(finish)
	if err := <-imported; err != nil {
		t.Fatalf("import: %v", err)
	}
	f.read(t)
	f.read(t)
	f.expectExactlyOnce(t, s)
	expectMatchesReference(t, "raw", s, normalized(log[:2020]))
}

// TestFeedConcurrentWriters: many goroutines write turns and imports
// while a follower and the column index poll the feed; at the end the
// follower was given every api row exactly once and the index, the raw
// pass (whose code blocks were merged concurrently) and the rollups
// count exactly the reference.
func TestFeedConcurrentWriters(t *testing.T) {
	// Not parallel: SetCompactAlways changes every store of the binary.
	s := openStore(t, sqltest.PostgresDSN(t))
	sqlstore.SetCompactAlways(t)
	f := newFollower(s)
	idx, err := colindex.Build(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	const (
		turnWriters   = 12
		turnsEach     = 30
		importWriters = 2
		importsEach   = 4
	)
	var (
		mu      sync.Mutex
		written []analytics.Interaction
		wg      sync.WaitGroup
		failed  = make(chan error, turnWriters+importWriters)
	)
	for w := range turnWriters {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for k := range turnsEach {
				in := sampleLog(1+r.IntN(3), w*1000+k)
				err := s.WriteTx(context.Background(), func(ctx context.Context, tx bun.Tx) error {
					return s.AppendTx(ctx, tx, in)
				})
				if err != nil {
					failed <- fmt.Errorf("turn writer %d: %w", w, err)
					return
				}
				mu.Lock()
				written = append(written, in...)
				mu.Unlock()
			}
		})
	}
	for w := range importWriters {
		wg.Go(func() {
			for k := range importsEach {
				in := sampleLog(200, 50000+w*1000+k)
				if _, err := s.Append(context.Background(), sliceSeq(in)); err != nil {
					failed <- fmt.Errorf("import writer %d: %w", w, err)
					return
				}
				mu.Lock()
				written = append(written, in...)
				mu.Unlock()
			}
		})
	}
	stop := make(chan struct{})
	go func() { wg.Wait(); close(stop) }()
	reads := 0
	for polling := true; polling; reads++ {
		select {
		case <-stop:
			polling = false
		default:
		}
		f.read(t)
		if err := idx.Refresh(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	close(failed)
	for err := range failed {
		t.Error(err)
	}
	f.read(t)
	if err := idx.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d interactions written, %d reads while writing", len(written), reads)
	f.expectExactlyOnce(t, s)
	if want := len(apiOnly(written)); len(f.seen) != want {
		t.Errorf("the follower read %d rows, %d api rows were written", len(f.seen), want)
	}
	expectMatchesReference(t, "index", idx, normalized(written))
	expectMatchesReference(t, "raw", s, normalized(written))
	expectMatchesReference(t, "rollups", s.Rollups(), normalized(written))
}

func sliceSeq(in []analytics.Interaction) iter.Seq2[analytics.Interaction, error] {
	return func(yield func(analytics.Interaction, error) bool) {
		for _, i := range in {
			if !yield(i, nil) {
				return
			}
		}
	}
}
