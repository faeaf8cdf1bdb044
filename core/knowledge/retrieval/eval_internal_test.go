package retrieval

import "testing"

func TestRecallAndReciprocalRank(t *testing.T) {
	for _, c := range []struct {
		got, want []string
		recall    float64
		rr        float64
	}{
		{[]string{"a", "b", "c"}, []string{"b"}, 1, 0.5},
		{[]string{"a", "b"}, []string{"c", "a"}, 0.5, 1},
		{[]string{"x"}, []string{"y"}, 0, 0},
		{nil, []string{"y"}, 0, 0},
	} {
		if r := recall(c.got, c.want); r != c.recall {
			t.Errorf("recall(%v, %v) = %v, want %v", c.got, c.want, r, c.recall)
		}
		if r := reciprocalRank(c.got, c.want); r != c.rr {
			t.Errorf("rr(%v, %v) = %v, want %v", c.got, c.want, r, c.rr)
		}
	}
}
