package analytics

// FeedRow is one stored api interaction as a store hands it to a
// follower of its log (the column index): the store's id and the values
// as bytes, valid only during the call that receives the row.
type FeedRow struct {
	ID     int64 // unique; not in commit order when writers commit concurrently
	Micros int64 // the time, in microseconds since the Unix epoch
	Cat    []byte
	Topic, Model, Persona,
	QuestionID, Question,
	AnswerID, Answer []byte
	// Codes are the store's own codes of the topic, model, persona,
	// question and answer, when a snapshot gives them (0 otherwise): rows
	// of one CAT with the same code in a dimension have the same value.
	Codes [5]uint64
	// The row's usage and feedback: tokens, cost in 1e-9 USD (CostNanos),
	// its latency's LatencyBucket plus one (0 when it has no latency) and
	// its feedback's RatingCode.
	InputTokens, OutputTokens, CostNanos int64
	LatencyBucket                        int32
	Rating                               uint8
	// CatRows is, in a snapshot, how many rows of the row's CAT it holds
	// (0 when unknown).
	CatRows int
}
