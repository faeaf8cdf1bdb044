package colindex

import "slices"

// intColumn holds one int64 per row (tokens, a cost) in the narrowest
// signed width that fits its values so far: none while every value is 0,
// then one, two, four or eight bytes, widened once when a value outgrows
// the width. Most rows' tokens fit two bytes and their cost four.
type intColumn struct {
	i8  []int8
	i16 []int16
	i32 []int32
	i64 []int64
	// n is the row count while width is 0 (every value 0), and room the
	// rows reserve made room for meanwhile: widening makes it.
	n, room int
	// width is the bytes per value in use: 0, 1, 2, 4 or 8; only that
	// slice holds rows.
	width int
}

// intWidth is the types an intColumn can hold its values in.
type intWidth interface {
	~int8 | ~int16 | ~int32 | ~int64
}

func (c *intColumn) len() int {
	switch c.width {
	case 0:
		return c.n
	case 1:
		return len(c.i8)
	case 2:
		return len(c.i16)
	case 4:
		return len(c.i32)
	}
	return len(c.i64)
}

// get returns row k's value.
func (c *intColumn) get(k int) int64 {
	switch c.width {
	case 0:
		return 0
	case 1:
		return int64(c.i8[k])
	case 2:
		return int64(c.i16[k])
	case 4:
		return int64(c.i32[k])
	}
	return c.i64[k]
}

// widthOf returns the bytes a value needs.
func widthOf(v int64) int {
	switch {
	case v == 0:
		return 0
	case v >= -1<<7 && v < 1<<7:
		return 1
	case v >= -1<<15 && v < 1<<15:
		return 2
	case v >= -1<<31 && v < 1<<31:
		return 4
	}
	return 8
}

// insert puts v at row position at, moving the later rows by one.
func (c *intColumn) insert(at int, v int64) {
	if w := widthOf(v); w > c.width {
		c.widen(w)
	}
	switch c.width {
	case 0:
		c.n++
	case 1:
		c.i8 = slices.Insert(c.i8, at, int8(v)) // #nosec G115 -- the width fits v
	case 2:
		c.i16 = slices.Insert(c.i16, at, int16(v)) // #nosec G115 -- the width fits v
	case 4:
		c.i32 = slices.Insert(c.i32, at, int32(v)) // #nosec G115 -- the width fits v
	default:
		c.i64 = slices.Insert(c.i64, at, v)
	}
}

// widen moves the values to width w.
func (c *intColumn) widen(w int) {
	n := c.len()
	vals := make([]int64, n)
	for k := range vals {
		vals[k] = c.get(k)
	}
	// The room reserved (or grown) so far is kept: a column reserved for
	// a snapshot's rows is not grown again, nor trimmed, once it widens.
	room := max(n+n/4, 1024, c.capacity())
	if c.width == 0 {
		room = max(n, 1024, c.room)
	}
	c.i8, c.i16, c.i32, c.i64, c.n, c.room, c.width = nil, nil, nil, nil, 0, 0, w
	switch w {
	case 1:
		c.i8 = narrowed[int8](vals, room)
	case 2:
		c.i16 = narrowed[int16](vals, room)
	case 4:
		c.i32 = narrowed[int32](vals, room)
	default:
		c.i64 = slices.Grow(vals, room-n)
	}
}

func narrowed[T intWidth](vals []int64, room int) []T {
	out := make([]T, len(vals), max(room, len(vals)))
	for k, v := range vals {
		out[k] = T(v)
	}
	return out
}

// permute reorders the rows: row k becomes the former row perm[k].
func (c *intColumn) permute(perm []int32) {
	c.i8, c.i16, c.i32, c.i64 = permuted(c.i8, perm), permuted(c.i16, perm), permuted(c.i32, perm), permuted(c.i64, perm)
}

// capacity returns the rows the column has room for in its width.
func (c *intColumn) capacity() int {
	switch c.width {
	case 0:
		return c.room
	case 1:
		return cap(c.i8)
	case 2:
		return cap(c.i16)
	case 4:
		return cap(c.i32)
	}
	return cap(c.i64)
}

// reserve makes room for n values in the column's width, or in the
// width it takes when it widens from 0.
func (c *intColumn) reserve(n int) {
	switch c.width {
	case 0:
		c.room = max(c.room, n)
	case 1:
		c.i8 = slices.Grow(c.i8, max(0, n-len(c.i8)))
	case 2:
		c.i16 = slices.Grow(c.i16, max(0, n-len(c.i16)))
	case 4:
		c.i32 = slices.Grow(c.i32, max(0, n-len(c.i32)))
	case 8:
		c.i64 = slices.Grow(c.i64, max(0, n-len(c.i64)))
	}
}

// trim drops the spare capacity that growing left behind.
func (c *intColumn) trim() {
	c.i8, c.i16, c.i32, c.i64 = trimmed(c.i8), trimmed(c.i16), trimmed(c.i32), trimmed(c.i64)
}

// sum returns the sum of rows [lo, hi), each times its pass byte (every
// row once when pass is nil).
func (c *intColumn) sum(pass []uint8, lo, hi int) int64 {
	switch c.width {
	case 0:
		return 0
	case 1:
		return sumVals(pass, c.i8[lo:hi])
	case 2:
		return sumVals(pass, c.i16[lo:hi])
	case 4:
		return sumVals(pass, c.i32[lo:hi])
	}
	return sumVals(pass, c.i64[lo:hi])
}

func sumVals[T intWidth](pass []uint8, vals []T) int64 {
	// Four sums, so that the additions do not wait on each other.
	var s0, s1, s2, s3 int64
	n := len(vals) &^ 3
	if pass == nil {
		for k := 0; k < n; k += 4 {
			v := vals[k : k+4 : k+4]
			s0, s1, s2, s3 = s0+int64(v[0]), s1+int64(v[1]), s2+int64(v[2]), s3+int64(v[3])
		}
		for _, v := range vals[n:] {
			s0 += int64(v)
		}
		return s0 + s1 + s2 + s3
	}
	pass = pass[:len(vals)]
	for k := 0; k < n; k += 4 {
		v, p := vals[k:k+4:k+4], pass[k:k+4:k+4]
		s0 += int64(v[0]) * int64(p[0])
		s1 += int64(v[1]) * int64(p[1])
		s2 += int64(v[2]) * int64(p[2])
		s3 += int64(v[3]) * int64(p[3])
	}
	for k := n; k < len(vals); k++ {
		s0 += int64(vals[k]) * int64(pass[k])
	}
	return s0 + s1 + s2 + s3
}

// sumBy adds rows [lo, lo+len(groups)) to sums by their group, each times
// its pass byte.
func (c *intColumn) sumBy(sums []int64, groups []uint32, pass []uint8, lo int) {
	hi := lo + len(groups)
	switch c.width {
	case 0:
	case 1:
		sumValsBy(sums, groups, pass, c.i8[lo:hi])
	case 2:
		sumValsBy(sums, groups, pass, c.i16[lo:hi])
	case 4:
		sumValsBy(sums, groups, pass, c.i32[lo:hi])
	default:
		sumValsBy(sums, groups, pass, c.i64[lo:hi])
	}
}

func sumValsBy[T intWidth](sums []int64, groups []uint32, pass []uint8, vals []T) {
	groups = groups[:len(vals)]
	if pass == nil {
		for k, v := range vals {
			sums[groups[k]] += int64(v)
		}
		return
	}
	pass = pass[:len(vals)]
	for k, v := range vals {
		sums[groups[k]] += int64(v) * int64(pass[k])
	}
}
