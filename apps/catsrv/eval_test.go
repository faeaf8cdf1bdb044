package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/catsrv/catsrv/adapters/openai/embedtest"
)

// The shipped golden set over the demo CAT's manual: every mode is
// measured (vectors from the deterministic test embeddings server), and
// keyword and hybrid retrieval find the expected document in the first
// four for every question. The figures are printed with -v.
func TestEvalRetrievalOnTheDemoManual(t *testing.T) {
	srv := embedtest.Start()
	defer srv.Close()
	env := environ{
		"CATSRV_CATS__DEMO__CAT__KNOWLEDGE__EMBEDDINGS__BASE_URL=" + srv.BaseURL(),
		"CATSRV_CATS__DEMO__CAT__KNOWLEDGE__EMBEDDINGS__MODEL=hash-256",
	}
	var out bytes.Buffer
	err := run(t.Context(), []string{"eval", "retrieval", "--config", "../../configs", "--cat", "demo", "../../configs/documents/demo.golden.jsonl"}, env, nil, &out, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log("\n" + out.String())
	row := regexp.MustCompile(`(?m)^(keyword|vector|hybrid)\s+([0-9.]+)\s+([0-9.]+)$`)
	got := map[string][2]float64{}
	for _, m := range row.FindAllStringSubmatch(out.String(), -1) {
		r, _ := strconv.ParseFloat(m[2], 64)
		mrr, _ := strconv.ParseFloat(m[3], 64)
		got[m[1]] = [2]float64{r, mrr}
	}
	if len(got) != 3 || !strings.Contains(out.String(), "recall@4") {
		t.Fatalf("want three modes:\n%s", out.String())
	}
	for _, mode := range []string{"keyword", "hybrid"} {
		if got[mode][0] < 1 || got[mode][1] < 0.8 {
			t.Errorf("%s: recall@4 %.3f, MRR %.3f: the golden set no longer fits the manual", mode, got[mode][0], got[mode][1])
		}
	}
	if srv.Inputs.Load() == 0 {
		t.Error("nothing was embedded")
	}
}

func TestEvalRefusals(t *testing.T) {
	for _, args := range [][]string{
		{"eval"}, {"eval", "other"}, {"eval", "retrieval", "--config", "../../configs", "golden.jsonl"},
		{"eval", "retrieval", "--config", "../../configs", "--cat", "demo", "missing.jsonl"},
	} {
		if err := run(t.Context(), args, nil, nil, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
