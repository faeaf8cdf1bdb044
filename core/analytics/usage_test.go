package analytics_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/catsrv/catsrv/core/analytics"
)

// TestLatencyBucketsWithinOnePercent checks the bucket values' relative
// error over the whole range, at bucket edges too.
func TestLatencyBucketsWithinOnePercent(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	check := func(v float64) {
		b := analytics.LatencyBucket(v)
		if b < 1 || b >= analytics.LatencyBuckets {
			t.Fatalf("bucket of %v = %d", v, b)
		}
		if got := analytics.BucketMS(b); math.Abs(got-v)/v > analytics.LatencyRelativeError*(1+1e-9) {
			t.Fatalf("latency %v: bucket %d value %v, relative error %v", v, b, got, math.Abs(got-v)/v)
		}
	}
	for range 200_000 {
		check(analytics.LatencyFloorMS * math.Pow(analytics.LatencyCeilMS/analytics.LatencyFloorMS, r.Float64()) * (1 + 1e-12))
	}
	for b := 1; b < analytics.LatencyBuckets-1; b++ {
		edge := analytics.LatencyFloorMS * math.Pow((1+analytics.LatencyRelativeError)/(1-analytics.LatencyRelativeError), float64(b))
		check(math.Nextafter(edge, 0))
		check(math.Nextafter(edge, math.Inf(1)))
	}
	if analytics.LatencyBucket(0) != 0 || analytics.LatencyBucket(analytics.LatencyFloorMS) != 0 || analytics.BucketMS(0) != 0 {
		t.Fatal("latencies up to the floor must count as 0")
	}
	if analytics.LatencyBucket(1e12) != analytics.LatencyBuckets-1 {
		t.Fatal("latencies over the ceiling must fall in the last bucket")
	}
}

// TestPercentilesWithinOnePercent compares the histogram's percentiles
// with exact nearest-rank percentiles of random latencies.
func TestPercentilesWithinOnePercent(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for round := range 200 {
		n := 1 + r.IntN(500)
		var h analytics.LatencyHistogram
		vals := make([]float64, n)
		for k := range vals {
			vals[k] = 0.01 + r.ExpFloat64()*float64(1+round*10)
			h.Add(vals[k])
		}
		slices.Sort(vals)
		s := h.Summary()
		exact := func(p int) float64 { return vals[(p*n+99)/100-1] }
		for _, c := range []struct {
			p   int
			got float64
		}{{50, s.P50}, {90, s.P90}, {99, s.P99}, {100, s.Max}} {
			if want := exact(c.p); math.Abs(c.got-want)/want > analytics.LatencyRelativeError*(1+1e-9) {
				t.Fatalf("p%d of %d latencies = %v, exact %v", c.p, n, c.got, want)
			}
		}
		if s.Count != int64(n) {
			t.Fatalf("count %d, want %d", s.Count, n)
		}
	}
}
