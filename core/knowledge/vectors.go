package knowledge

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Normalize scales v to unit length in place (a zero vector stays zero),
// so a dot product of normalized vectors is their cosine similarity.
func Normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// Dot is the dot product of two vectors of the same length.
func Dot(a, b []float32) float32 {
	var s float32
	for i := range min(len(a), len(b)) {
		s += a[i] * b[i]
	}
	return s
}

// Scored is an index into a list with its score.
type Scored struct {
	Index int
	Score float64
}

// TopK returns the k vectors with the highest dot product with q, best
// first (ties by index): an exact scan.
func TopK(q []float32, vecs [][]float32, k int) []Scored {
	if k <= 0 {
		return nil
	}
	top := make([]Scored, 0, k+1)
	for i, v := range vecs {
		s := float64(Dot(q, v))
		if len(top) == k && s <= top[k-1].Score {
			continue
		}
		at, _ := slices.BinarySearchFunc(top, s, func(e Scored, s float64) int { return cmp.Compare(s, e.Score) })
		// Equal scores keep index order: insert after them.
		for at < len(top) && top[at].Score == s {
			at++
		}
		top = slices.Insert(top, at, Scored{i, s})
		if len(top) > k {
			top = top[:k]
		}
	}
	return top
}

// Excerpt is the extract of a passage that answers terms best: the unit
// (line or sentence) holding most of them, and the units after it, up to
// about maxRunes; headings and code fences are left out. Without any term
// it is the passage's opening.
func Excerpt(text string, terms []string, maxRunes int) string {
	var units []string
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") || strings.HasPrefix(line, "#") {
			continue
		}
		units = append(units, sentences(line)...)
	}
	if len(units) == 0 {
		return ""
	}
	best, bestCov := 0, -1.0
	for i, u := range units {
		if c := Coverage(terms, u); c > bestCov {
			best, bestCov = i, c
		}
	}
	out := units[best]
	for _, u := range units[best+1:] {
		if utf8.RuneCountInString(out)+1+utf8.RuneCountInString(u) > maxRunes {
			break
		}
		out += " " + u
	}
	if utf8.RuneCountInString(out) > maxRunes {
		r := []rune(out)
		out = strings.TrimSpace(string(r[:maxRunes])) + "…"
	}
	return out
}
