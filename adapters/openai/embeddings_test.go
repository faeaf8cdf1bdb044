package openai_test

import (
	"slices"
	"testing"

	"github.com/catsrv/catsrv/adapters/openai"
	"github.com/catsrv/catsrv/adapters/openai/embedtest"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/core/knowledge"
)

func TestEmbedderAgainstServer(t *testing.T) {
	srv := embedtest.Start()
	defer srv.Close()
	e := openai.NewEmbedder(openai.Options{APIKey: func(string) string { return "k" }})
	inputs := []string{"reset the password", "resetting passwords", "volcanic basalt geology"}
	got, err := e.Embed(t.Context(), knowledge.EmbedRequest{Cat: "demo", BaseURL: srv.BaseURL(), Model: "m1", Inputs: inputs})
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range inputs {
		if !slices.Equal(got[i], embedtest.Vector("m1", in)) {
			t.Errorf("input %d: vector differs from the server's", i)
		}
	}
	a, b, c := knowledge.Normalize(got[0]), knowledge.Normalize(got[1]), knowledge.Normalize(got[2])
	if close, far := knowledge.Dot(a, b), knowledge.Dot(a, c); close <= far || close < 0.3 {
		t.Errorf("close words %.3f, unrelated %.3f", close, far)
	}
	if srv.Calls.Load() != 1 || srv.Inputs.Load() != 3 {
		t.Errorf("calls %d inputs %d, want one batch of 3", srv.Calls.Load(), srv.Inputs.Load())
	}
	small, err := e.Embed(t.Context(), knowledge.EmbedRequest{BaseURL: srv.BaseURL(), Model: "m-small", Inputs: inputs[:1]})
	if err != nil || len(small[0]) != embedtest.SmallDims {
		t.Errorf("small model: %d dims, %v", len(small[0]), err)
	}
}

func TestEmbedderFailures(t *testing.T) {
	srv := embedtest.Start()
	defer srv.Close()
	e := openai.NewEmbedder(openai.Options{})
	req := knowledge.EmbedRequest{BaseURL: srv.BaseURL(), Model: "m1", Inputs: []string{"x"}}
	srv.SetDown(true)
	if _, err := e.Embed(t.Context(), req); errs.KindOf(err) != errs.KindUnavailable {
		t.Errorf("down: %v", err)
	}
	srv.SetDown(false)
	req.BaseURL = ""
	if _, err := e.Embed(t.Context(), req); errs.KindOf(err) != errs.KindUnavailable {
		t.Errorf("no endpoint: %v", err)
	}
	srv.Close()
	req.BaseURL = srv.BaseURL()
	if _, err := e.Embed(t.Context(), req); errs.KindOf(err) != errs.KindUnavailable {
		t.Errorf("closed server: %v", err)
	}
}
