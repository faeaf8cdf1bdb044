package sqlstore_test

import (
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
	"github.com/catsrv/catsrv/core/analytics"
)

// TestTurnsFindEntriesOfEachDictionary: a turn finds the codes of entries
// the dictionaries hold already in one look-up over all of them
// (PostgreSQL). The same text as a topic, a model and a persona of one CAT
// has the same digest in three dictionaries: each row must get the code of
// its own dictionary's entry. The turns rotate the texts over the
// dictionaries, so later turns look up digests that other dictionaries
// hold under other codes, and the last ones have one text in every
// dictionary, of which only some hold it; the rollups, the raw pass and the
// column index's feed must then answer as the reference does.
func TestTurnsFindEntriesOfEachDictionary(t *testing.T) {
	t.Parallel() // own stores only
	s := openStore(t, sqltest.PostgresDSN(t))
	texts := []string{"x", "y", "z"}
	var log []analytics.Interaction
	for k := range 9 {
		log = append(log, analytics.Interaction{
			Time: day0.Add(time.Duration(k) * time.Hour), Cat: "alpha", EventKind: "api",
			Topic: texts[k%3], Model: texts[(k+1)%3], Persona: texts[(k+2)%3],
			Question: texts[(k+k/3)%3], QuestionID: texts[k%3], Answer: texts[(k+1)%3], AnswerID: texts[(k+2)%3],
		})
	}
	// A text that a turn has as its topic, model and persona at once,
	// known as a topic only: the look-up must not give the model and the
	// persona the topic's code.
	for k, same := range []bool{false, true, true} {
		i := analytics.Interaction{
			Time: day0.Add(time.Duration(10+k) * time.Hour), Cat: "alpha", EventKind: "api",
			Topic: "w", Model: "x", Persona: "y", Question: "q", QuestionID: "q", Answer: "a", AnswerID: "a",
		}
		if same {
			i.Model, i.Persona = "w", "w"
		}
		log = append(log, i)
	}
	f := newFollower(s)
	for k := range log {
		turn(t, s, log[k:k+1])
	}
	f.read(t)
	f.expectExactlyOnce(t, s)
	ref := normalized(log)
	expectMatchesReference(t, "rollups", s.Rollups(), ref)
	expectMatchesReference(t, "raw", s, ref)
}
