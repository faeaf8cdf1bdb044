// Package analytics is the domain model of catsrv's analytics: the logged
// interaction, the query (CAT, date range, filters), the result lists and the
// rules that turn counts into a result (selective filtering, percentages,
// ordering, limits).
//
// It also holds the reference aggregation, [Aggregate], a plain scan over
// interactions that every storage adapter is tested against. The package
// imports nothing outside the standard library and core.
package analytics
