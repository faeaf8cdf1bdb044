package analytics

// Price is what a model costs, in US dollars per million tokens read
// (input) and written (output).
type Price struct {
	InputPerMTok  float64
	OutputPerMTok float64
}

// Cost returns what the tokens cost at the price, in US dollars.
func (p Price) Cost(inputTokens, outputTokens int64) float64 {
	return (float64(inputTokens)*p.InputPerMTok + float64(outputTokens)*p.OutputPerMTok) / 1e6
}

// WithCost returns the usage with its cost computed at the price when it
// has none (CostUSD 0): a cost the writer gave is kept. An absent cost
// and a cost of 0 are one value, so a model priced at 0 for some answers
// needs no pricing at all.
func (u Usage) WithCost(p Price) Usage {
	if u.CostUSD == 0 {
		u.CostUSD = p.Cost(u.InputTokens, u.OutputTokens)
	}
	return u
}
