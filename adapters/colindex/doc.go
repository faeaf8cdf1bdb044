// Package colindex is an in-process columnar index of the api interactions,
// answering [ports.RollupStore] in a few milliseconds where SQL rollups
// take hundreds.
//
// Each CAT's rows are held as columns, rows ordered by time so that a
// date range is a slice found by binary search: the time (exact
// microseconds in four bytes a row: the low 32 bits per row, the high
// bits once per run of rows sharing them), the code of the row's (topic,
// model, persona) combination, and its question and answer codes. Code
// columns are one, two or four bytes a row, the narrowest that holds the
// dimension's codes, widened when it outgrows them. Dictionaries keep
// their keys and texts back to back in chunks with a hash table of codes,
// so that hundreds of thousands of one-off questions cost little more
// than their bytes. A count is one pass over the range's slice, on both
// cores when it is long, a block of rows at a time, with a filter
// expressed as a per-code bitmap (topic, model and persona filters as one
// bitmap of combinations). Three shortcuts avoid most passes: running
// totals per code (the full range), a per-day cube of combination counts
// (requests without question or answer filters, over whole days) and
// per-code posting lists of questions and answers (a selective filter on
// them; a code with one row keeps its position in place of a list). The
// posting lists' tables also give a long range's question and answer
// lists when nothing is filtered (a count of each code's positions in
// it), and a topic, model or persona filter over the whole CAT reads
// each code's rows per combination, built from them once the CAT's rows
// stay the same (see combolists.go). A question or answer list cut to a
// limit over a range with no filter is found from the codes with the most
// rows in the CAT, kept in classes by total: once the codes left have
// fewer rows in all than the limit's lowest count in the range, they are
// not counted (see heavy.go).
// An answer (ports.Aggregator, one call per question) is counted under one
// hold of the read lock; when its lists would each read the same rows
// again, one pass counts them with the total (see pass.go).
// A row older than its CAT's newest is inserted at its place, moving the
// later rows and their postings by one; a late batch that would move more
// rows than a sort costs is appended and the CAT sorted once.
//
// The index is a cache of the database, never the record: it is built at
// start-up (so a restart rebuilds it) from a snapshot of the database
// when the source is also a Snapshot (the store's compact code
// blocks and dictionaries, with the feed position to follow from), else
// from the whole Feed; it is brought up to
// date after every Append this process commits (see [Log]) and, for the
// writes of other instances sharing the database, by polling the feed from
// the position its last read returned (see [Index.Follow]). The feed
// passes every committed row once across reads from successive positions
// (Feed), however the writers' commits interleave, so the
// index never skips nor counts twice a committed row. A refresh makes all the
// rows one read returned (whole transactions) visible at once, under one
// hold of the write lock, having read and coded them without it; a
// large one builds a CAT's next columns beside those readers use and
// swaps them in (see draft.go).
//
// Deleted rows (retention, erasure) reach the index through the source's
// Deletions: when a refresh sees a deletion generation above the
// one it reflects, it builds each CAT that lost rows anew from a read made
// after seeing it and swaps it in whole (see [Index.Refresh]); [Eraser]
// does so as soon as this process's deletion returns.
package colindex
