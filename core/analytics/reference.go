package analytics

// CountTotal counts the interactions that belong to the selection.
func CountTotal(interactions []Interaction, s Selection) int64 {
	var n int64
	for _, i := range interactions {
		if s.Matches(i) {
			n++
		}
	}
	return n
}

// CountGroups groups the interactions that belong to the selection by the
// dimension's key and text, in no particular order. Interactions must be
// normalized (see Interaction.Normalize).
func CountGroups(interactions []Interaction, s Selection, d Dimension) []Group {
	type groupKey struct{ key, text string }
	counts := map[groupKey]int64{}
	for _, i := range interactions {
		if s.Matches(i) {
			counts[groupKey{i.Key(d), i.Text(d)}]++
		}
	}
	out := make([]Group, 0, len(counts))
	for k, n := range counts {
		out = append(out, Group{Key: k.key, Text: k.text, Count: n})
	}
	return out
}

// CountAnswer counts the wanted parts of a query's answer by scanning
// interactions: the reference every storage adapter's one call
// (ports.Aggregator) must agree with exactly. It is where the selective
// filtering rule is applied: the total counts the interactions that pass
// every filter (Query.Selection); each list groups those that pass every
// filter but its own dimension's (Query.SelectionFor). The question and
// answer lists hold, when the query has a limit, exactly its first Limit
// groups in SortGroups order (see Top); the other lists, and those two
// without a limit, are in no particular order. Parts not wanted are left
// zero. Interactions must be normalized (see Interaction.Normalize).
func CountAnswer(interactions []Interaction, q Query, want Parts) Counts {
	c := Counts{Groups: map[Dimension][]Group{}}
	if want.Has(PartTotal) {
		c.Total = CountTotal(interactions, q.Selection())
	}
	for _, d := range Dimensions {
		if want.Has(ListOf(d)) {
			c.Groups[d] = Top(CountGroups(interactions, q.SelectionFor(d), d), q.LimitOf(d))
		}
	}
	return c
}

// Aggregate computes the result of a query by scanning interactions: the
// reference implementation of the whole analytics computation, CountAnswer
// assembled.
func Aggregate(interactions []Interaction, q Query) Result {
	return AssembleQuery(CountAnswer(interactions, q, AllParts), q)
}
