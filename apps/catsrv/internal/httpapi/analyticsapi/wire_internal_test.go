package analyticsapi

import (
	"testing"
	"unsafe"

	"github.com/catsrv/catsrv/core/analytics"
)

// TestListsShareTheCoresMemory: the wire question and answer lists read
// the core's entries in place, field for field, and an empty or nil list
// is an empty slice (JSON []).
func TestListsShareTheCoresMemory(t *testing.T) {
	qs := []analytics.QuestionEntry{{ID: "q1", Question: "why?", Count: 3}, {ID: "q2", Question: "how?", Count: 1}}
	got := questionList(qs)
	if len(got) != 2 || unsafe.Pointer(&got[0]) != unsafe.Pointer(&qs[0]) {
		t.Fatalf("questionList does not share the core's entries")
	}
	for k, e := range qs {
		if got[k] != QuestionEntry(e) {
			t.Errorf("question %d: %+v, want %+v", k, got[k], e)
		}
	}
	as := []analytics.AnswerEntry{{ID: "a1", Answers: "because", Count: 7}}
	if a := answerList(as); len(a) != 1 || a[0] != AnswerEntry(as[0]) {
		t.Errorf("answerList = %+v, want %+v", a, as)
	}
	for _, empty := range [][]analytics.QuestionEntry{nil, {}} {
		if l := questionList(empty); l == nil || len(l) != 0 {
			t.Errorf("questionList(%#v) = %#v, want an empty slice", empty, l)
		}
	}
}
