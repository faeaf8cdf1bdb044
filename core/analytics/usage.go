package analytics

import (
	"math"
	"slices"
	"strings"

	"github.com/catsrv/catsrv/core/errs"
)

// GroupBy is what /usage and /feedback group their counts by.
type GroupBy int

// The groupings: none, by model, persona or topic, or by UTC day.
const (
	GroupNone GroupBy = iota
	GroupModel
	GroupPersona
	GroupTopic
	GroupDay
)

// ParseGroupBy reads a group_by parameter: "" (no groups), model,
// persona, topic or day.
func ParseGroupBy(s string) (GroupBy, error) {
	switch s {
	case "":
		return GroupNone, nil
	case "model":
		return GroupModel, nil
	case "persona":
		return GroupPersona, nil
	case "topic":
		return GroupTopic, nil
	case "day":
		return GroupDay, nil
	}
	return 0, errs.New(errs.KindInvalid, "group_by must be one of model, persona, topic, day")
}

// GroupKey returns the interaction's key under a grouping: its model,
// persona or topic, or its UTC day as YYYY-MM-DD; "" for GroupNone.
func (i Interaction) GroupKey(g GroupBy) string {
	switch g {
	case GroupModel:
		return i.Model
	case GroupPersona:
		return i.Persona
	case GroupTopic:
		return i.Topic
	case GroupDay:
		return i.Time.UTC().Format(DateLayout)
	}
	return ""
}

// UsageQuery asks for the usage and feedback of a selection, in total
// and grouped. Every filter applies to the total and to every group.
type UsageQuery struct {
	Cat     string
	Range   Range
	Filters Filters
	GroupBy GroupBy
	// RatingsOnly asks only for Up and Down (what /feedback shows): a
	// counter may then leave the other stats 0 and the groups without a
	// rating out.
	RatingsOnly bool
}

// Selection returns what the query counts.
func (q UsageQuery) Selection() Selection {
	return Selection{Cat: q.Cat, Range: q.Range, Filters: q.Filters}
}

// Rating codes, as stores and the index keep a rating in a byte.
const (
	RatingCodeNone uint8 = iota
	RatingCodeUp
	RatingCodeDown
)

// RatingCode returns the code of a rating ("" is none).
func RatingCode(rating string) uint8 {
	switch rating {
	case RatingUp:
		return RatingCodeUp
	case RatingDown:
		return RatingCodeDown
	}
	return RatingCodeNone
}

// CostNanos returns a cost in units of 1e-9 US dollars, as usage sums it:
// sums of integers are exact in any order, so every back end sums the same
// cost.
func CostNanos(usd float64) int64 {
	return int64(math.Round(usd * 1e9))
}

// Latency buckets: a latency is counted in a log-scaled bucket whose
// value is within LatencyRelativeError of every latency it holds, so
// percentiles need a histogram, not the latencies. Latencies of at most
// LatencyFloorMS fall in bucket 0 (value 0); those above LatencyCeilMS in
// the last bucket.
const (
	LatencyRelativeError = 0.01
	LatencyFloorMS       = 0.001
	LatencyCeilMS        = 1e9
)

var (
	latencyGamma    = (1 + LatencyRelativeError) / (1 - LatencyRelativeError)
	latencyLogGamma = math.Log(latencyGamma)
	// LatencyBuckets is how many buckets there are.
	LatencyBuckets = int(math.Ceil(math.Log(LatencyCeilMS/LatencyFloorMS)/latencyLogGamma)) + 1
)

// LatencyBucket returns the bucket of a latency: 0 for at most
// LatencyFloorMS, else the i with floor·γ^(i-1) < ms <= floor·γ^i (γ =
// (1+ε)/(1-ε)), at most LatencyBuckets-1.
func LatencyBucket(ms float64) int {
	if !(ms > LatencyFloorMS) {
		return 0
	}
	b := int(math.Ceil(math.Log(ms/LatencyFloorMS) / latencyLogGamma))
	return min(max(b, 1), LatencyBuckets-1)
}

// BucketMS returns the value of a bucket: 0 for bucket 0, else
// floor·2γ^i/(γ+1), within ε of every latency of the bucket.
func BucketMS(b int) float64 {
	if b <= 0 {
		return 0
	}
	return LatencyFloorMS * 2 * math.Pow(latencyGamma, float64(b)) / (latencyGamma + 1)
}

// Latency summarizes the latencies of a set of interactions: how many
// had one, the 50th, 90th and 99th percentiles (nearest rank) and the
// maximum, all as bucket values, within LatencyRelativeError. All 0 when
// Count is 0.
type Latency struct {
	Count         int64
	P50, P90, P99 float64
	Max           float64
}

// LatencyHistogram counts latencies per bucket.
type LatencyHistogram struct {
	Counts []int64 // Counts[i] is bucket First+i's; nil until the first latency
	First  int
	N      int64
}

// Add counts one latency.
func (h *LatencyHistogram) Add(ms float64) { h.AddCount(LatencyBucket(ms), 1) }

// AddCount counts n latencies of bucket b.
func (h *LatencyHistogram) AddCount(b int, n int64) {
	if n <= 0 {
		return
	}
	if h.Counts == nil {
		h.Counts = make([]int64, LatencyBuckets)
	}
	h.Counts[b-h.First] += n
	h.N += n
}

// Summary returns the percentiles and the maximum.
func (h *LatencyHistogram) Summary() Latency {
	if h.N == 0 {
		return Latency{}
	}
	out := Latency{Count: h.N}
	ranks := [...]int64{(50*h.N + 99) / 100, (90*h.N + 99) / 100, (99*h.N + 99) / 100, h.N}
	dst := [...]*float64{&out.P50, &out.P90, &out.P99, &out.Max}
	var seen int64
	k := 0
	for b, n := range h.Counts {
		seen += n
		for k < len(ranks) && seen >= ranks[k] {
			*dst[k] = BucketMS(h.First + b)
			k++
		}
		if k == len(ranks) {
			break
		}
	}
	return out
}

// UsageStats is what a set of interactions took and how it was rated.
type UsageStats struct {
	Interactions int64
	InputTokens  int64
	OutputTokens int64
	CostNanos    int64 // the sum of CostNanos of each cost
	Latency      Latency
	Up, Down     int64
}

// CostUSD returns the summed cost in US dollars.
func (s UsageStats) CostUSD() float64 { return float64(s.CostNanos) / 1e9 }

// Satisfaction returns up / (up + down), and false when there is no
// rating.
func (s UsageStats) Satisfaction() (float64, bool) {
	if s.Up+s.Down == 0 {
		return 0, false
	}
	return float64(s.Up) / float64(s.Up+s.Down), true
}

// UsageGroup is the stats of one group.
type UsageGroup struct {
	Key string
	UsageStats
}

// UsageCounts is a UsageQuery's answer: the total and, when grouped,
// every group with at least one interaction, in no particular order
// until SortUsageGroups.
type UsageCounts struct {
	Total  UsageStats
	Groups []UsageGroup
}

// UsageSum accumulates UsageStats row by row.
type UsageSum struct {
	Interactions, InputTokens, OutputTokens, CostNanos, Up, Down int64
	Latency                                                      LatencyHistogram
}

// Add counts one interaction.
func (s *UsageSum) Add(i Interaction) {
	s.Interactions++
	s.InputTokens += i.Usage.InputTokens
	s.OutputTokens += i.Usage.OutputTokens
	s.CostNanos += CostNanos(i.Usage.CostUSD)
	if i.Usage.LatencyMS != nil {
		s.Latency.Add(*i.Usage.LatencyMS)
	}
	switch RatingCode(i.Feedback.Rating) {
	case RatingCodeUp:
		s.Up++
	case RatingCodeDown:
		s.Down++
	}
}

// Stats returns the accumulated stats.
func (s *UsageSum) Stats() UsageStats {
	return UsageStats{Interactions: s.Interactions, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens,
		CostNanos: s.CostNanos, Latency: s.Latency.Summary(), Up: s.Up, Down: s.Down}
}

// CountUsage is the reference of ports.UsageCounter: the usage and
// feedback of the query's selection, in total and per group (every group
// with an interaction, in no particular order). Interactions must be
// normalized.
func CountUsage(interactions []Interaction, q UsageQuery) UsageCounts {
	sel := q.Selection()
	var total UsageSum
	groups := map[string]*UsageSum{}
	for _, i := range interactions {
		if !sel.Matches(i) {
			continue
		}
		total.Add(i)
		if q.GroupBy == GroupNone {
			continue
		}
		k := i.GroupKey(q.GroupBy)
		g := groups[k]
		if g == nil {
			g = &UsageSum{}
			groups[k] = g
		}
		g.Add(i)
	}
	out := UsageCounts{Total: total.Stats()}
	for k, g := range groups {
		out.Groups = append(out.Groups, UsageGroup{Key: k, UsageStats: g.Stats()})
	}
	return out
}

// SortUsageGroups orders groups as /usage and /feedback list them and
// keeps at most limit (<= 0: all): days oldest first, keeping the newest
// limit days; other groups by descending rank (interactions, or ratings
// for feedback), then key.
func SortUsageGroups(groups []UsageGroup, g GroupBy, limit int, rank func(UsageStats) int64) []UsageGroup {
	groups = slices.Clone(groups)
	if g == GroupDay {
		slices.SortFunc(groups, func(a, b UsageGroup) int { return strings.Compare(a.Key, b.Key) })
		if limit > 0 && len(groups) > limit {
			groups = groups[len(groups)-limit:]
		}
		return groups
	}
	slices.SortFunc(groups, func(a, b UsageGroup) int {
		ra, rb := rank(a.UsageStats), rank(b.UsageStats)
		if ra != rb {
			if ra > rb {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	if limit > 0 && len(groups) > limit {
		groups = groups[:limit]
	}
	return groups
}
