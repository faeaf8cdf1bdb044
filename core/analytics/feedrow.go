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
}
