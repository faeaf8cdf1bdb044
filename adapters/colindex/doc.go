// Package colindex is an in-process column index of a store's api
// interactions that answers [ports.RollupStore] and [ports.UsageCounter]
// in milliseconds: per CAT, time-ordered columns of dictionary codes and
// usage, counted in one branch-free pass over a date range's slice, kept
// equal to the store by following its feed (docs/architecture.md, "The
// index's contract").
package colindex
