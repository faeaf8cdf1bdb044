package porttest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// withID is i with an interaction id.
func withID(i analytics.Interaction, id string) analytics.Interaction {
	i.InteractionID = id
	return i
}

// appendExpecting appends in, expects Append to report stored, and keeps
// the interactions listed as kept in the reference.
func (h *harness) appendExpecting(in []analytics.Interaction, stored int, kept ...analytics.Interaction) {
	h.t.Helper()
	n, err := h.log.Append(h.t.Context(), analytics.Each(in))
	if err != nil {
		h.t.Fatalf("Append: %v", err)
	}
	if n != stored {
		h.t.Fatalf("Append returned %d, want %d", n, stored)
	}
	for _, i := range kept {
		h.ref = append(h.ref, i.Normalize())
	}
}

// testInteractionIDStoredOnce: an interaction id is stored once per CAT,
// whether repeated in one Append, in a later one or in another event kind;
// the same id in another CAT, and interactions without an id, are stored.
func testInteractionIDStoredOnce(t *testing.T, h *harness) {
	a := withID(event(day(1), "account", "model-a", "student", "Q1?", "A1."), "id-a")
	b := withID(event(day(2), "billing", "model-b", "teacher", "Q2?", "A2."), "id-b")
	noID := event(day(3), "account", "model-a", "student", "Q3?", "A3.")
	aAgain := withID(event(day(4), "other", "model-c", "parent", "Q4?", "A4."), "id-a")
	h.appendExpecting([]analytics.Interaction{a, b, aAgain, noID}, 3, a, b, noID)
	h.expect(analytics.Selection{Cat: catAlpha})

	// The retried batch: only the interaction without an id is new.
	h.appendExpecting([]analytics.Interaction{a, b, aAgain, noID}, 1, noID)
	h.expect(analytics.Selection{Cat: catAlpha})

	// Another CAT has ids of its own; another event kind shares the CAT's.
	inBeta := a
	inBeta.Cat = catBeta
	other := withID(event(day(5), "account", "model-a", "student", "Q5?", "A5."), "id-c")
	other.EventKind = "audit"
	otherAgain := withID(event(day(5), "account", "model-a", "student", "Q6?", "A6."), "id-c")
	h.appendExpecting([]analytics.Interaction{inBeta, other, otherAgain, b}, 2, inBeta, other)
	h.expect(analytics.Selection{Cat: catAlpha})
	h.expect(analytics.Selection{Cat: catBeta})
}

// longAppend is longer than the batches a writer may cut an Append into
// (an SQL store writes an Append of one batch, such as an HTTP request's,
// and a longer one, such as an import, in different ways).
const longAppend = 9000

// idBatch is size interactions with the ids prefix-0, prefix-1, …
func idBatch(size int, prefix string) []analytics.Interaction {
	batch := make([]analytics.Interaction, size)
	for k := range batch {
		batch[k] = withID(event(day(k%10).Add(time.Duration(k)*time.Second), fmt.Sprintf("topic %d", k%7), "model-a", "student",
			fmt.Sprintf("question %d", k), fmt.Sprintf("answer %d", k%13)), fmt.Sprintf("%s-%d", prefix, k))
	}
	return batch
}

// testInteractionIDStoredOnceLong: testInteractionIDStoredOnce for Appends
// of longAppend interactions, an id repeated far into the input.
func testInteractionIDStoredOnceLong(t *testing.T, h *harness) {
	first := idBatch(longAppend, "long")
	again := withID(event(day(3), "other", "model-c", "parent", "Q again?", "A again."), "long-10")
	h.appendExpecting(append(slices.Clone(first), again), longAppend, first...)
	h.expect(analytics.Selection{Cat: catAlpha})

	// The retried input stores nothing; one half old, half new stores the
	// new half.
	h.appendExpecting(append(slices.Clone(first), again), 0)
	mixed := append(slices.Clone(first[longAppend/2:]), idBatch(longAppend, "more")[:longAppend/2]...)
	h.appendExpecting(mixed, longAppend/2, mixed[longAppend-longAppend/2:]...)
	h.expect(analytics.Selection{Cat: catAlpha})
}

// testInteractionIDConcurrentRetries: concurrent Appends of the same
// batch store it once. An Append may fail with a temporary unavailable
// error (the contract allows it); run again, it stores nothing new.
func testInteractionIDConcurrentRetries(t *testing.T, h *harness) {
	concurrentRetries(t, h, idBatch(1500, "retry"), 4)
}

// testInteractionIDConcurrentRetriesLong: the same for Appends of
// longAppend interactions.
func testInteractionIDConcurrentRetriesLong(t *testing.T, h *harness) {
	concurrentRetries(t, h, idBatch(longAppend, "retry"), 2)
}

// concurrentRetries appends batch from appenders goroutines at once and
// expects it stored once.
func concurrentRetries(t *testing.T, h *harness, batch []analytics.Interaction, appenders int) {
	size := len(batch)
	var wg sync.WaitGroup
	stored := make([]int, appenders)
	failed := make([]error, appenders)
	for g := range appenders {
		wg.Go(func() {
			for attempt := 0; ; attempt++ {
				n, err := h.log.Append(t.Context(), analytics.Each(batch))
				if err == nil {
					stored[g] = n
					return
				}
				var e *errs.Error
				if attempt == 10 || !errors.As(err, &e) || e.Kind != errs.KindUnavailable || !errors.Is(err, errs.ErrTemporary) {
					failed[g] = err
					return
				}
			}
		})
	}
	wg.Wait()
	total := 0
	for g := range appenders {
		if failed[g] != nil {
			t.Fatalf("Append %d: %v", g, failed[g])
		}
		if stored[g] != 0 && stored[g] != size {
			t.Errorf("Append %d stored %d of the %d interactions, want all or none", g, stored[g], size)
		}
		total += stored[g]
	}
	if total != size {
		t.Fatalf("the concurrent Appends stored %d interactions together (%v), want %d", total, stored, size)
	}
	for _, i := range batch {
		h.ref = append(h.ref, i.Normalize())
	}
	h.expect(analytics.Selection{Cat: catAlpha})
}
