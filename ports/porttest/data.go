package porttest

import (
	"time"

	"github.com/catsrv/catsrv/core/analytics"
)

// The CATs the suite writes to.
const (
	catAlpha = "alpha"
	catBeta  = "beta"
)

// day0 is the first day of the suite's hand-made data, a UTC midnight.
var day0 = time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC)

// day returns the UTC midnight n days after day0.
func day(n int) time.Time { return day0.AddDate(0, 0, n) }

// event returns an api interaction of CAT alpha at the time with the given
// topic, model and persona, and a question and answer; callers change
// fields as each case needs.
func event(at time.Time, topic, model, persona, question, answer string) analytics.Interaction {
	return analytics.Interaction{
		Time: at, Cat: catAlpha, EventKind: analytics.EventKindAPI,
		Topic: topic, Model: model, Persona: persona, Question: question, Answer: answer,
		UserID: "user-1", ConversationID: "conv-1",
	}
}

// withKind returns the interaction with another event kind.
func withKind(i analytics.Interaction, kind string) analytics.Interaction {
	i.EventKind = kind
	return i
}

// withCat returns the interaction in another CAT.
func withCat(i analytics.Interaction, cat string) analytics.Interaction {
	i.Cat = cat
	return i
}

// withIDs returns the interaction with given question and answer ids.
func withIDs(i analytics.Interaction, questionID, answerID string) analytics.Interaction {
	i.QuestionID, i.AnswerID = questionID, answerID
	return i
}

// mixedLog is a small varied log of CAT alpha over three days, with every
// dimension taking several values and a few non-api events.
func mixedLog() []analytics.Interaction {
	qReset, qShip, qRefund := "How do I reset my password?", "Where is my parcel?", "Can I get a refund?"
	aReset, aShip, aRefund := "Use the reset link.", "It ships tomorrow.", "Yes, within 30 days."
	return []analytics.Interaction{
		event(day(0).Add(9*time.Hour), "account", "model-a", "student", qReset, aReset),
		event(day(0).Add(10*time.Hour), "account", "model-b", "teacher", qReset, aReset),
		event(day(0).Add(11*time.Hour), "shipping", "model-a", "student", qShip, aShip),
		event(day(1).Add(1*time.Hour), "shipping", "model-c", "admin", qShip, aShip),
		event(day(1).Add(2*time.Hour), "billing", "model-a", "teacher", qRefund, aRefund),
		event(day(1).Add(3*time.Hour), "billing", "model-b", "student", qRefund, aShip),
		event(day(2).Add(4*time.Hour), "account", "model-c", "student", qReset, aRefund),
		event(day(2).Add(5*time.Hour), "billing", "model-a", "admin", qShip, aShip),
		withKind(event(day(1).Add(6*time.Hour), "account", "model-a", "student", qReset, aReset), "feedback"),
		withKind(event(day(2).Add(6*time.Hour), "billing", "model-b", "teacher", qRefund, aRefund), "system"),
	}
}
