// Package embedtest serves a deterministic OpenAI-compatible
// /v1/embeddings for tests and the retrieval evaluation: the same text
// always gets the same vector, and texts sharing words or parts of words
// get close vectors (hashed character trigrams of each word, plus the
// word itself). No model weights: a stand-in for a real embeddings
// service, which this environment does not have.
package embedtest

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/catsrv/catsrv/core/chat"
)

// Dims is the length of the vectors of every model but "*-small" ones.
const Dims = 256

// SmallDims is the length of the vectors of models whose name ends with
// "-small", to test a model change with another dimension.
const SmallDims = 64

// Vector is the embedding of text by model: a model's name seeds the
// hashing, so two models give unrelated vectors.
func Vector(model, text string) []float32 {
	dims := Dims
	if strings.HasSuffix(model, "-small") {
		dims = SmallDims
	}
	v := make([]float32, dims)
	add := func(feature string, w float32) {
		h := fnv.New64a()
		_, _ = h.Write([]byte(model))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(feature))
		x := h.Sum64()
		sign := float32(1)
		if x>>63 == 1 {
			sign = -1
		}
		v[x%uint64(dims)] += sign * w
	}
	for _, word := range chat.Tokens(text) {
		add("w:"+word, 1)
		r := []rune("^" + word + "$")
		for i := 0; i+3 <= len(r); i++ {
			add("g:"+string(r[i:i+3]), 0.5)
		}
	}
	return v
}

// Server is the test embeddings service.
type Server struct {
	*httptest.Server
	// Calls and Inputs count requests and texts embedded.
	Calls, Inputs atomic.Int64
	mu            sync.Mutex
	down          bool
}

// Start serves /v1/embeddings until the returned server is closed.
func Start() *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is what cat.knowledge.embeddings.base_url names.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// SetDown makes every request fail with 503 (true) or succeed again.
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	s.down = down
	s.mu.Unlock()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		http.Error(w, `{"error":{"message":"down for the test"}}`, http.StatusServiceUnavailable)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	var inputs []string
	if err := json.Unmarshal(req.Input, &inputs); err != nil {
		var one string
		if err := json.Unmarshal(req.Input, &one); err != nil {
			http.Error(w, `{"error":{"message":"input must be a string or a list of strings"}}`, http.StatusBadRequest)
			return
		}
		inputs = []string{one}
	}
	s.Calls.Add(1)
	s.Inputs.Add(int64(len(inputs)))
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]item, len(inputs))
	for i, in := range inputs {
		data[i] = item{Object: "embedding", Index: i, Embedding: Vector(req.Model, in)}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": 0, "total_tokens": 0},
	})
}
