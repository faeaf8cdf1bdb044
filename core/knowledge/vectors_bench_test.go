package knowledge

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkTopK is one question's exact scan over a CAT's vectors: the
// figure that bounds how many chunks the in-memory index serves (100k
// chunks of 256 dimensions hold 100 MB; of 1536, 600 MB).
func BenchmarkTopK(b *testing.B) {
	for _, c := range []struct{ n, dims int }{{10_000, 256}, {100_000, 256}, {100_000, 1536}} {
		b.Run(fmt.Sprintf("chunks=%d/dims=%d", c.n, c.dims), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			vecs := make([][]float32, c.n)
			for i := range vecs {
				v := make([]float32, c.dims)
				for j := range v {
					v[j] = r.Float32() - 0.5
				}
				vecs[i] = Normalize(v)
			}
			q := vecs[0]
			b.ResetTimer()
			for b.Loop() {
				TopK(q, vecs, 20)
			}
		})
	}
}
