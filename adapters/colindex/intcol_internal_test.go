package colindex

import "testing"

// TestIntColumnKeepsReservedRoom reserves room in a column of zeros,
// widens it three times while filling it, and expects it to hold every
// value in exactly the room reserved: a snapshot's columns are not
// grown again (nor copied by trim) once their values need a width.
func TestIntColumnKeepsReservedRoom(t *testing.T) {
	const n = 10_000
	var c intColumn
	c.reserve(n)
	want := make([]int64, n)
	for k := range want {
		switch {
		case k < 100: // zeros: no width yet
		case k < 2000:
			want[k] = int64(k % 100)
		case k < 5000:
			want[k] = int64(k * 3)
		default:
			want[k] = int64(k) << 16
		}
		c.insert(k, want[k])
	}
	if c.width != 4 {
		t.Fatalf("width %d, want 4", c.width)
	}
	if got := c.capacity(); got != n {
		t.Errorf("room for %d values after %d inserts into %d reserved, want %d", got, n, n, n)
	}
	for k, v := range want {
		if got := c.get(k); got != v {
			t.Fatalf("row %d = %d, want %d", k, got, v)
		}
	}
}
