package porttest

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/catsrv/catsrv/core/analytics"
)

// FeedSnapshotStore is a followable log that also answers a snapshot.
type FeedSnapshotStore interface {
	DeletionFeedStore
	// The snapshot the column index starts from (colindex.Snapshot).
	ReadSnapshot(ctx context.Context, fn func(*analytics.FeedRow) error) (after int64, given map[int64]string, err error)
}

// feedRowText is a feed row without its id, as comparable text.
func feedRowText(r *analytics.FeedRow) string {
	return fmt.Sprintf("%s|%d|%s|%s|%s|%s|%s|%s|%s", r.Cat, r.Micros, r.Topic, r.Model, r.Persona,
		r.QuestionID, r.Question, r.AnswerID, r.Answer)
}

// TestFeedSnapshot runs the contract of the feed snapshot (colindex.Snapshot) with no writer
// running: the snapshot gives the same api rows as ReadSince from 0 (other
// event kinds and deleted rows left out), and ReadSince from its position
// gives exactly the rows appended after it.
func TestFeedSnapshot(t *testing.T, open func(t *testing.T) FeedSnapshotStore) {
	s := open(t)
	ctx := t.Context()
	log := mixedLog()
	for k := range log {
		log[k] = withCat(log[k], []string{catAlpha, catBeta}[k%2])
	}
	if _, err := s.Append(ctx, analytics.Each(log)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteInteractions(ctx, analytics.Deletion{Cat: catAlpha, Before: day(1)}, 0); err != nil {
		t.Fatal(err)
	}
	count := func(into map[string]int) func(*analytics.FeedRow) error {
		return func(r *analytics.FeedRow) error {
			into[feedRowText(r)]++
			return nil
		}
	}
	fromFeed, fromSnapshot := map[string]int{}, map[string]int{}
	if _, err := s.ReadSince(ctx, 0, count(fromFeed)); err != nil {
		t.Fatal(err)
	}
	position, given, err := s.ReadSnapshot(ctx, count(fromSnapshot))
	if err != nil {
		t.Fatal(err)
	}
	if len(fromFeed) == 0 || !maps.Equal(fromSnapshot, fromFeed) {
		t.Errorf("the snapshot's rows %v, the feed's %v", fromSnapshot, fromFeed)
	}
	if len(given) != 0 {
		t.Errorf("with no writer running, the snapshot gives %d rows again", len(given))
	}

	later := []analytics.Interaction{
		withCat(event(day(2), "late topic", "m", "p", "late question?", "late answer."), catBeta),
		withCat(event(day(0), "t", "m", "p", "early question?", "a"), catAlpha),
	}
	if _, err := s.Append(ctx, analytics.Each(later)); err != nil {
		t.Fatal(err)
	}
	after := map[string]int{}
	if _, err := s.ReadSince(ctx, position, count(after)); err != nil {
		t.Fatal(err)
	}
	if len(after) != len(later) {
		t.Errorf("ReadSince(the snapshot's position) gave %v, want the %d rows appended after it", after, len(later))
	}
	for k := range after {
		if fromSnapshot[k] > 0 {
			t.Errorf("ReadSince(the snapshot's position) gave a row the snapshot held: %s", k)
		}
	}
}
