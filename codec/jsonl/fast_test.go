package jsonl

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

// agreesWithEncodingJSON fails t when the fast path accepts b but
// encoding/json refuses it or reads other values.
func agreesWithEncodingJSON(t *testing.T, b []byte) {
	t.Helper()
	var fast, std record
	var scratch []byte
	if !decodeFast(b, &fast, &scratch) {
		return
	}
	if err := json.Unmarshal(b, &std); err != nil {
		t.Fatalf("fast path accepted %q, encoding/json says %v", b, err)
	}
	if !reflect.DeepEqual(fast, std) {
		t.Fatalf("fast path read %q as\n%+v\nencoding/json as\n%+v", b, fast, std)
	}
}

var fastPathSeeds = []string{
	`{"time":"2025-03-01T10:00:00Z","cat":"demo","event_kind":"api","question":"q","answer":"a","topic":"t","model":"m","persona":"p"}`,
	`{}`, ` { } `, `{"a":"b"}`, "{\"question\" :\t\"x\" ,\r\n\"answer\":\"y\"}",
	`{"question":"say \"hi\" \\ \/ \b\f\n\r\t"}`, `{"question":"\u00e9"}`, `{"question":"é日本😀"}`,
	`{"Question":"x"}`, `{"QUESTION":"x"}`, `{"question":"a","Question":"b"}`, "{\"\u212aey\":\"x\"}", `{"model_":"x"}`,
	`{"question":"a","question":"b"}`, `{"question":null}`, `{"question":1}`, `{"x":{"question":"y"}}`, `{"x":[1]}`,
	`{"question":"a",}`, `{"question" "a"}`, `{"question":"a"`, `{"question":"a"}x`, `{"question":"a"}}`,
	`{"question":"a` + "\x01" + `"}`, `{"question":"a` + "\xff" + `"}`, `{"question":"\x"}`, `{"q\"uestion":"a"}`,
	`{"input_tokens":12,"output_tokens":0,"latency_ms":12.5,"first_token_ms":1e2,"cost_usd":-0.0}`,
	`{"input_tokens":1.0}`, `{"input_tokens":1e2}`, `{"input_tokens":-0}`, `{"input_tokens":01}`, `{"input_tokens":99999999999999999999}`,
	`{"latency_ms":1e400}`, `{"latency_ms":.5}`, `{"latency_ms":1.}`, `{"latency_ms":-}`, `{"cost_usd":"1"}`, `{"cost_usd":null}`,
	`{"latency_ms":1,"latency_ms":2}`, `{"Latency_ms":3}`, `{"feedback":{"rating":"up"}}`, `{"latency_ms":1E+2}`,
	`["question"]`, `"question"`, `null`, ``, `{"question":"a\`, `{"question":"\u12"}`, `{"question":"\ud800"}`,
}

func TestFastPathAgreesWithEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	mutations := []byte("{}[]\":,\\ ntu0aAQ\x00\x01\x7f\xff\xc3\xa9/19.eE+-")
	for _, seed := range fastPathSeeds {
		agreesWithEncodingJSON(t, []byte(seed))
		for range 3000 {
			b := []byte(seed)
			for range 1 + r.IntN(3) {
				pos := 0
				if len(b) > 0 {
					pos = r.IntN(len(b))
				}
				c := mutations[r.IntN(len(mutations))]
				switch r.IntN(3) {
				case 0:
					if len(b) > 0 {
						b[pos] = c
					}
				case 1:
					b = append(b[:pos], append([]byte{c}, b[pos:]...)...)
				case 2:
					if len(b) > 0 {
						b = append(b[:pos], b[pos+1:]...)
					}
				}
			}
			agreesWithEncodingJSON(t, b)
		}
	}
}

func TestFastPathTakesTheCommonShape(t *testing.T) {
	var rec record
	var scratch []byte
	for _, line := range []string{fastPathSeeds[0], `{}`, ` { } `, `{"a":"b"}`, "{\"question\" :\t\"x\" ,\r\n\"answer\":\"y\"}",
		`{"question":"say \"hi\" \\ \/ \b\f\n\r\t"}`, `{"question":"é日本😀"}`, `{"question":"a","question":"b"}`} {
		if !decodeFast([]byte(line), &rec, &scratch) {
			t.Errorf("fast path gave up on %s", line)
		}
	}
}

func FuzzFastPath(f *testing.F) {
	for _, s := range fastPathSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { agreesWithEncodingJSON(t, b) })
}
