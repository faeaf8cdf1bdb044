package jsonl

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// decodeFast reads the shape nearly every line has, one flat object whose
// values are all strings, without encoding/json's reflection and double
// scan (about three times faster), and the numbers of the usage fields.
// It gives up, returning false, on anything else: other numbers, null, nested values, \u escapes, invalid UTF-8,
// keys that differ from a field name only in case, any syntax error. The
// caller then falls back to encoding/json, which decides and words the
// error. So it never accepts a line encoding/json would refuse or read
// differently; fast_test.go checks that against encoding/json itself.
func decodeFast(b []byte, rec *record, scratch *[]byte) bool {
	*rec = record{}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		key, next, escaped, ok := scanString(b, i, scratch)
		if !ok || escaped {
			return false
		}
		field, numeric := rec.field(key), rec.number(key)
		if field == nil && !numeric && foldsToField(key) {
			return false
		}
		i = skipSpace(b, next)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		if numeric {
			if next, ok = rec.setNumber(key, b, i); !ok {
				return false
			}
		} else {
			var value []byte
			if value, next, _, ok = scanString(b, i, scratch); !ok {
				return false
			}
			if field != nil {
				*field = string(value)
			}
		}
		i = skipSpace(b, next)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// field returns where the value of a key goes, nil for an unknown key.
// The switch on string(key) does not allocate.
func (rec *record) field(key []byte) *string {
	switch string(key) {
	case "time":
		return &rec.Time
	case "cat":
		return &rec.Cat
	case "event_kind":
		return &rec.EventKind
	case "question":
		return &rec.Question
	case "answer":
		return &rec.Answer
	case "topic":
		return &rec.Topic
	case "model":
		return &rec.Model
	case "persona":
		return &rec.Persona
	case "question_id":
		return &rec.QuestionID
	case "answer_id":
		return &rec.AnswerID
	case "user_id":
		return &rec.UserID
	case "conversation_id":
		return &rec.ConversationID
	case "interaction_id":
		return &rec.InteractionID
	}
	return nil
}

// number reports whether key names a numeric field.
func (rec *record) number(key []byte) bool {
	switch string(key) {
	case "input_tokens", "output_tokens", "latency_ms", "first_token_ms", "cost_usd":
		return true
	}
	return false
}

// setNumber reads the JSON number at b[i] into the numeric field key
// names and returns the index after it; false for anything else (null,
// a string, an integer field's fraction or exponent, a value out of
// range), which encoding/json decides.
func (rec *record) setNumber(key []byte, b []byte, i int) (int, bool) {
	end, integer := scanNumber(b, i)
	if end < 0 {
		return 0, false
	}
	text := string(b[i:end])
	switch string(key) {
	case "input_tokens", "output_tokens":
		if !integer {
			return 0, false
		}
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return 0, false
		}
		if string(key) == "input_tokens" {
			rec.InputTokens = &n
		} else {
			rec.OutputTokens = &n
		}
	default:
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return 0, false
		}
		switch string(key) {
		case "latency_ms":
			rec.LatencyMS = &v
		case "first_token_ms":
			rec.FirstTokenMS = &v
		default:
			rec.CostUSD = &v
		}
	}
	return end, true
}

// scanNumber returns the end of the JSON number at b[i] (-1 if there is
// none) and whether it is an integer (no fraction, no exponent).
func scanNumber(b []byte, i int) (end int, integer bool) {
	digits := func(j int) int {
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j
	}
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && b[j] >= '1' && b[j] <= '9':
		j = digits(j)
	default:
		return -1, false
	}
	integer = true
	if j < len(b) && b[j] == '.' {
		k := digits(j + 1)
		if k == j+1 {
			return -1, false
		}
		j, integer = k, false
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		k := digits(j)
		if k == j {
			return -1, false
		}
		j, integer = k, false
	}
	return j, integer
}

var fieldNames = []string{"time", "cat", "event_kind", "question", "answer", "topic", "model", "persona",
	"question_id", "answer_id", "user_id", "conversation_id", "interaction_id",
	// Numbers, read by setNumber; feedback, an object, goes to encoding/json.
	"input_tokens", "output_tokens", "latency_ms", "first_token_ms", "cost_usd", "feedback"}

// foldsToField reports whether encoding/json might match key to a field
// although it is not spelt exactly like one: it matches names ignoring case
// (with some Unicode folding, hence any non-ASCII key counts).
func foldsToField(key []byte) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	for _, name := range fieldNames {
		if strings.EqualFold(string(key), name) {
			return true
		}
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString reads the JSON string starting at b[i]. Without escapes the
// value is a slice of b; with simple escapes it is decoded into *scratch.
// It returns the index after the closing quote, and false for anything the
// fast path leaves to encoding/json.
func scanString(b []byte, i int, scratch *[]byte) (value []byte, next int, escaped, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false, false
	}
	start := i + 1
	high := false
	j := start
	for ; j < len(b); j++ {
		c := b[j]
		if c == '"' {
			if high && !utf8.Valid(b[start:j]) {
				return nil, 0, false, false
			}
			return b[start:j], j + 1, false, true
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return nil, 0, false, false
		}
		high = high || c >= utf8.RuneSelf
	}
	out := append((*scratch)[:0], b[start:j]...)
	for j < len(b) {
		c := b[j]
		switch {
		case c == '"':
			*scratch = out
			if high && !utf8.Valid(out) {
				return nil, 0, false, false
			}
			return out, j + 1, true, true
		case c == '\\':
			if j+1 >= len(b) {
				return nil, 0, false, false
			}
			e, ok := unescape(b[j+1])
			if !ok {
				return nil, 0, false, false
			}
			out = append(out, e)
			j += 2
		case c < 0x20:
			return nil, 0, false, false
		default:
			high = high || c >= utf8.RuneSelf
			out = append(out, c)
			j++
		}
	}
	return nil, 0, false, false
}

// unescape decodes a one-character escape; \u is left to encoding/json.
func unescape(c byte) (byte, bool) {
	switch c {
	case '"', '\\', '/':
		return c, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}
