package colindex

// A count reads its rows a block at a time: first each filter clears, in
// a byte per row, the rows it rejects (see filterBlock), then the rows
// are counted per code, each adding its byte (see countBlock). Bytes
// rather than branches let the loops run without mispredictions when the
// filters pass rows in an unpredictable pattern, and each loop reads one
// column in its own width, so no column is widened.

// blockRows is how many rows a count reads at a time: small enough for
// its pass bytes to stay in the CPU's fastest cache.
const blockRows = 4096

// codeWidth is the types a code column can hold its codes in.
type codeWidth interface{ ~uint8 | ~uint16 | ~uint32 }

// filterBlock clears pass[k] for row lo+k when allow has 0 for its code.
func filterBlock(pass, allow []uint8, col *codeColumn, lo int) {
	hi := lo + len(pass)
	switch col.width {
	case 1:
		filterCodes(pass, allow, col.u8[lo:hi])
	case 2:
		filterCodes(pass, allow, col.u16[lo:hi])
	default:
		filterCodes(pass, allow, col.u32[lo:hi])
	}
}

func filterCodes[T codeWidth](pass, allow []uint8, codes []T) {
	pass = pass[:len(codes)]
	for k, c := range codes {
		pass[k] &= allow[c]
	}
}

// filterTimes clears pass[k] when times[k] is outside [start, end).
func filterTimes(pass []uint8, times []int64, start, end int64) {
	pass = pass[:len(times)]
	for k, at := range times {
		if at < start || at >= end {
			pass[k] = 0
		}
	}
}

// countBlock adds pass[k] to the count of row lo+k's code in col; with
// pass nil, every row counts one.
func countBlock(counts []int64, pass []uint8, col *codeColumn, lo, hi int) {
	switch col.width {
	case 1:
		countCodes(counts, pass, col.u8[lo:hi])
	case 2:
		countCodes(counts, pass, col.u16[lo:hi])
	default:
		countCodes(counts, pass, col.u32[lo:hi])
	}
}

func countCodes[T codeWidth](counts []int64, pass []uint8, codes []T) {
	if pass == nil {
		for _, c := range codes {
			counts[c]++
		}
		return
	}
	pass = pass[:len(codes)]
	for k, c := range codes {
		counts[c] += int64(pass[k])
	}
}

// countPositions adds one to the count of the code of each row at the
// positions.
func countPositions(counts []int64, col *codeColumn, positions []int32) {
	switch col.width {
	case 1:
		countAt(counts, col.u8, positions)
	case 2:
		countAt(counts, col.u16, positions)
	default:
		countAt(counts, col.u32, positions)
	}
}

func countAt[T codeWidth](counts []int64, codes []T, positions []int32) {
	for _, r := range positions {
		counts[codes[r]]++
	}
}

// sumPass returns how many rows pass.
func sumPass(pass []uint8) int64 {
	var n int64
	for _, p := range pass {
		n += int64(p)
	}
	return n
}
