package demo

import (
	"math/rand/v2"
	"time"
)

// hourWeights and weekdayWeights shape traffic mildly: quiet nights, a
// midday peak, calmer weekends (UTC).
var (
	hourWeights = [24]float64{0.35, 0.3, 0.3, 0.3, 0.35, 0.45, 0.6, 0.75, 0.9, 1, 1, 1,
		0.95, 1, 1, 0.95, 0.9, 0.85, 0.8, 0.75, 0.65, 0.55, 0.45, 0.4}
	weekdayWeights = [7]float64{0.75, 1, 1, 1, 1, 0.95, 0.75} // Sunday first
)

// timeline hands out n times in [start, end), in increasing order, spread
// like the traffic pattern: the k-th time is the traffic's quantile of a
// random point in [k/n, (k+1)/n). Time order makes the output look like a
// real log, and it costs no sorting and no memory per line.
type timeline struct {
	start  time.Time
	n      int
	cum    []float64 // cum[h] is the traffic weight before hour h of the window
	hour   int       // the hour the last time fell in; quantiles only grow
	random *rand.Rand
}

func newTimeline(end time.Time, days, n int, r *rand.Rand) *timeline {
	start := end.Add(-time.Duration(days) * 24 * time.Hour)
	hours := days * 24
	cum := make([]float64, hours+1)
	for h := range hours {
		t := start.Add(time.Duration(h) * time.Hour).UTC()
		cum[h+1] = cum[h] + hourWeights[t.Hour()]*weekdayWeights[t.Weekday()]
	}
	return &timeline{start: start, n: n, cum: cum, random: r}
}

// at returns the k-th time, k from 0 to n-1, called in increasing k.
func (tl *timeline) at(k int) time.Time {
	total := tl.cum[len(tl.cum)-1]
	u := (float64(k) + tl.random.Float64()) / float64(tl.n) * total
	for tl.hour < len(tl.cum)-2 && tl.cum[tl.hour+1] <= u {
		tl.hour++
	}
	frac := (u - tl.cum[tl.hour]) / (tl.cum[tl.hour+1] - tl.cum[tl.hour])
	ms := min(max(int64(frac*float64(time.Hour/time.Millisecond)), 0), int64(time.Hour/time.Millisecond)-1)
	return tl.start.Add(time.Duration(tl.hour)*time.Hour + time.Duration(ms)*time.Millisecond)
}
