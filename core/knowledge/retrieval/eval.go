package retrieval

import (
	"context"
	"slices"

	"github.com/catsrv/catsrv/core/catconfig"
)

// Golden is one question of a golden set with the documents that answer
// it.
type Golden struct {
	Question string   `json:"question"`
	Expected []string `json:"expected"`
}

// Score is a retrieval mode's figures over a golden set.
type Score struct {
	Mode Mode
	// Recall is the mean share of a question's expected documents among
	// the first K documents retrieved (recall@K).
	Recall float64
	// MRR is the mean reciprocal rank of the first expected document
	// among the first K (0 when none is there).
	MRR float64
	K   int
}

// Evaluate ranks every golden question in each mode and scores the first
// k distinct documents of the ranking against the expected ones.
func (s *Service) Evaluate(ctx context.Context, cfg catconfig.Cat, golden []Golden, k int, modes ...Mode) ([]Score, error) {
	var out []Score
	for _, mode := range modes {
		sc := Score{Mode: mode, K: k}
		for _, g := range golden {
			hits, err := s.Rank(ctx, cfg, g.Question, mode, 8*k)
			if err != nil {
				return nil, err
			}
			var docs []string
			for _, h := range hits {
				if !slices.Contains(docs, h.Passage.DocID) {
					docs = append(docs, h.Passage.DocID)
				}
			}
			docs = docs[:min(len(docs), k)]
			sc.Recall += recall(docs, g.Expected)
			sc.MRR += reciprocalRank(docs, g.Expected)
		}
		if n := float64(len(golden)); n > 0 {
			sc.Recall /= n
			sc.MRR /= n
		}
		out = append(out, sc)
	}
	return out, nil
}

func recall(got, expected []string) float64 {
	if len(expected) == 0 {
		return 0
	}
	found := 0
	for _, e := range expected {
		if slices.Contains(got, e) {
			found++
		}
	}
	return float64(found) / float64(len(expected))
}

func reciprocalRank(got, expected []string) float64 {
	for i, d := range got {
		if slices.Contains(expected, d) {
			return 1 / float64(i+1)
		}
	}
	return 0
}
