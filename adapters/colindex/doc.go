// Package colindex is an in-process columnar index of the api interactions,
// answering [ports.RollupStore] in a few milliseconds where SQL rollups
// take hundreds.
//
// Each CAT's rows are held as columns: the time in microseconds and one
// dictionary code per dimension (topic, model, persona, question, answer),
// rows ordered by time so that a date range is a slice found by binary
// search. A count is one pass over that slice, on both cores when it is
// long, with a filter expressed as a per-code bitmap of its dimension.
// Three shortcuts avoid most passes: running totals per code (the full
// range), a per-day cube of (topic, model, persona) counts (requests
// without question or answer filters, over whole days) and per-code
// posting lists of questions and answers (a selective filter on them).
// A row older than its CAT's newest is inserted at its place, moving the
// later rows and their postings by one; a late batch that would move more
// rows than a sort costs is appended and the CAT sorted once.
//
// The index is a cache of the database, never the record: it is built
// from the raw rows at start-up (so a restart rebuilds it), brought up to
// date after every Append this process commits (see [Log]) and, for the
// writes of other instances sharing the database, by polling the
// interactions' ids above its high-water mark (see [Index.Follow]). Writers
// serialize per database, so ids become visible in increasing order and a
// high-water mark never skips a committed row.
package colindex
