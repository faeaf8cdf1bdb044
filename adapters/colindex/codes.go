package colindex

import "slices"

// codeColumn holds one dictionary code per row in the narrowest width
// that fits its largest code so far: one byte while the dimension has at
// most 256 values, two up to 65536, four beyond, widened once when a
// code outgrows the width. Counts read each width with its own loop (see
// block.go); other readers get uint32 codes (get, decode).
type codeColumn struct {
	u8  []uint8
	u16 []uint16
	u32 []uint32
	// width is the bytes per code in use: 1, 2 or 4; only that slice
	// holds rows.
	width int
}

func newCodeColumn() codeColumn { return codeColumn{width: 1} }

func (c *codeColumn) len() int {
	switch c.width {
	case 1:
		return len(c.u8)
	case 2:
		return len(c.u16)
	}
	return len(c.u32)
}

// get returns row k's code.
func (c *codeColumn) get(k int) uint32 {
	switch c.width {
	case 1:
		return uint32(c.u8[k])
	case 2:
		return uint32(c.u16[k])
	}
	return c.u32[k]
}

// decode returns the codes of rows [lo, hi) as uint32, hi-lo at most
// len(buf): the column itself when it is four bytes wide, else widened
// into buf.
func (c *codeColumn) decode(buf []uint32, lo, hi int) []uint32 {
	switch c.width {
	case 1:
		return widen(buf, c.u8[lo:hi])
	case 2:
		return widen(buf, c.u16[lo:hi])
	}
	return c.u32[lo:hi]
}

func widen[T uint8 | uint16](buf []uint32, codes []T) []uint32 {
	buf = buf[:len(codes)]
	for k, code := range codes {
		buf[k] = uint32(code)
	}
	return buf
}

// insert puts code at row position at, moving the later rows by one.
func (c *codeColumn) insert(at int, code uint32) {
	c.fit(code)
	if at == c.len() { // the usual case: a row in time order, last
		switch c.width {
		case 1:
			c.u8 = append(c.u8, uint8(code)) // #nosec G115 -- fit checked the width
		case 2:
			c.u16 = append(c.u16, uint16(code)) // #nosec G115 -- fit checked the width
		default:
			c.u32 = append(c.u32, code)
		}
		return
	}
	switch c.width {
	case 1:
		c.u8 = slices.Insert(c.u8, at, uint8(code)) // #nosec G115 -- fit checked the width
	case 2:
		c.u16 = slices.Insert(c.u16, at, uint16(code)) // #nosec G115 -- fit checked the width
	default:
		c.u32 = slices.Insert(c.u32, at, code)
	}
}

// fit widens the column if code does not fit its width.
func (c *codeColumn) fit(code uint32) {
	switch {
	case c.width == 1 && code > 0xff && code <= 0xffff:
		c.u16 = widenAll[uint16](c.u8)
		c.u8, c.width = nil, 2
	case c.width == 1 && code > 0xffff:
		c.u32 = widenAll[uint32](c.u8)
		c.u8, c.width = nil, 4
	case c.width == 2 && code > 0xffff:
		c.u32 = widenAll[uint32](c.u16)
		c.u16, c.width = nil, 4
	}
}

func widenAll[W uint16 | uint32, T uint8 | uint16](codes []T) []W {
	out := make([]W, len(codes), max(len(codes)+len(codes)/4, cap(codes), 1024))
	for k, code := range codes {
		out[k] = W(code)
	}
	return out
}

// permute reorders the rows: row k becomes the former row perm[k].
func (c *codeColumn) permute(perm []int32) {
	c.u8, c.u16, c.u32 = permuted(c.u8, perm), permuted(c.u16, perm), permuted(c.u32, perm)
}

func permuted[T any](codes []T, perm []int32) []T {
	if codes == nil {
		return nil
	}
	out := make([]T, len(perm))
	for k, p := range perm {
		out[k] = codes[p]
	}
	return out
}

// reserve makes room for n codes in the column's width (widening keeps
// the room).
func (c *codeColumn) reserve(n int) {
	switch c.width {
	case 1:
		c.u8 = slices.Grow(c.u8, max(0, n-len(c.u8)))
	case 2:
		c.u16 = slices.Grow(c.u16, max(0, n-len(c.u16)))
	default:
		c.u32 = slices.Grow(c.u32, max(0, n-len(c.u32)))
	}
}

// trim drops the spare capacity that growing left behind.
func (c *codeColumn) trim() {
	c.u8, c.u16, c.u32 = trimmed(c.u8), trimmed(c.u16), trimmed(c.u32)
}

// trimmed returns s in an allocation of its length, when the spare
// capacity is worth a copy.
func trimmed[T any](s []T) []T {
	if cap(s)-len(s) < 1024 || cap(s)-len(s) < len(s)/16 {
		return s
	}
	return slices.Clone(s)
}
