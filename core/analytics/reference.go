package analytics

// CountTotal counts the interactions that belong to the selection. With
// CountGroups it is the reference every storage adapter must agree with.
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

// Aggregate computes the result of a query by scanning interactions: the
// reference implementation of the whole analytics computation.
func Aggregate(interactions []Interaction, q Query) Result {
	c := Counts{Total: CountTotal(interactions, q.Selection()), Groups: map[Dimension][]Group{}}
	for _, d := range Dimensions {
		c.Groups[d] = CountGroups(interactions, q.SelectionFor(d), d)
	}
	return Assemble(c, q.Limit)
}
