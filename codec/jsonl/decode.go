// Package jsonl is the codec of catsrv's interaction format, JSON Lines: a
// format at the edge (import, demo, export), not an adapter of a port. One
// JSON object a line with the fields time (RFC 3339), cat, event_kind,
// question, answer, topic, model, persona (all required) and question_id,
// answer_id, user_id, conversation_id and interaction_id (optional; a log
// stores one interaction per CAT and interaction_id), the usage
// input_tokens and output_tokens (integers), latency_ms, first_token_ms
// and cost_usd (numbers), all >= 0 and optional, and feedback (optional,
// {"rating": "up"|"down", "reason"?, "comment"?}). Unknown fields are
// ignored, blank lines skipped.
package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"reflect"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// MaxLineBytes bounds one line (without its line end). A longer line is
// reported invalid without being held in memory, and decoding goes on.
const MaxLineBytes = 1 << 20

// ReadFailed is the No of the Line reporting that the reader itself failed.
// Such a Line is always the last one of the sequence.
const ReadFailed = -1

// Line is one decoded line: its 1-based number in the input and either the
// interaction or why the line is invalid. Line numbers count blank lines
// too, so they match what an editor shows.
type Line struct {
	No          int
	Interaction analytics.Interaction
	Err         error
}

// record is the wire form of a line. Time stays a string so that a bad time
// is reported as such rather than as a JSON decoding error.
type record struct {
	Time           string `json:"time"`
	Cat            string `json:"cat"`
	EventKind      string `json:"event_kind"`
	Question       string `json:"question"`
	Answer         string `json:"answer"`
	Topic          string `json:"topic"`
	Model          string `json:"model"`
	Persona        string `json:"persona"`
	QuestionID     string `json:"question_id"`
	AnswerID       string `json:"answer_id"`
	UserID         string `json:"user_id"`
	ConversationID string `json:"conversation_id"`
	InteractionID  string `json:"interaction_id"`
	// Usage and feedback, absent from most lines: the fast path leaves
	// lines with them to encoding/json.
	InputTokens  *int64        `json:"input_tokens"`
	OutputTokens *int64        `json:"output_tokens"`
	LatencyMS    *float64      `json:"latency_ms"`
	FirstTokenMS *float64      `json:"first_token_ms"`
	CostUSD      *float64      `json:"cost_usd"`
	Feedback     *feedbackJSON `json:"feedback"`
}

// feedbackJSON is the wire form of an interaction's feedback.
type feedbackJSON struct {
	Rating  string `json:"rating"`
	Reason  string `json:"reason,omitempty"`
	Comment string `json:"comment,omitempty"`
}

// Decode yields every non-blank line of r, valid or not, streaming: memory
// use is bounded by MaxLineBytes whatever the input size. Each invalid line
// carries an errs.KindInvalid (or KindTooLarge) error naming the problem.
// If r fails, the last Line has No == ReadFailed and the reader's error.
func Decode(r io.Reader) iter.Seq[Line] { return DecodeFor(r, "") }

// DecodeFor is Decode with cat as the CAT of every line that leaves its
// cat out (the ingestion route's catname); lines that name a CAT keep it.
func DecodeFor(r io.Reader, cat string) iter.Seq[Line] {
	return func(yield func(Line) bool) {
		lr := lineReader{r: bufio.NewReaderSize(r, 64<<10)}
		ld := lineDecoder{cat: cat}
		for no := 1; ; no++ {
			raw, tooLong, err := lr.next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(Line{No: ReadFailed, Err: errs.Wrap(errs.KindUnavailable, err, "reading the input failed")})
				return
			}
			raw = trimLineEnd(raw)
			if no == 1 {
				raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf")) // a byte order mark some editors write
			}
			if tooLong || len(raw) > MaxLineBytes {
				if !yield(Line{No: no, Err: errs.New(errs.KindTooLarge, "line is longer than %d bytes", MaxLineBytes)}) {
					return
				}
				continue
			}
			if isBlank(raw) {
				continue
			}
			i, err := ld.decode(raw)
			if !yield(Line{No: no, Interaction: i, Err: err}) {
				return
			}
		}
	}
}

// lineDecoder holds what decoding reuses from line to line.
type lineDecoder struct {
	rec     record
	scratch []byte
	cat     string // the CAT of lines without one, "" for none
}

// decode parses and validates one line: by the fast path when it can,
// otherwise by encoding/json.
func (ld *lineDecoder) decode(raw []byte) (analytics.Interaction, error) {
	if !decodeFast(raw, &ld.rec, &ld.scratch) {
		ld.rec = record{}
		if err := json.Unmarshal(raw, &ld.rec); err != nil {
			return analytics.Interaction{}, jsonError(err)
		}
	}
	return ld.interaction()
}

// interaction checks the parsed line and returns its interaction.
func (ld *lineDecoder) interaction() (analytics.Interaction, error) {
	rec := &ld.rec
	if rec.Time == "" {
		return analytics.Interaction{}, errs.New(errs.KindInvalid, "missing field: time")
	}
	if rec.Cat == "" {
		rec.Cat = ld.cat
	}
	t, err := time.Parse(time.RFC3339Nano, rec.Time)
	if err != nil {
		return analytics.Interaction{}, errs.New(errs.KindInvalid, "field time: %q is not an RFC 3339 time such as 2025-01-31T09:30:00Z", clip(rec.Time))
	}
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		// An offset can carry a time of year 0000 or 9999 past the years
		// RFC 3339 writes once it is in UTC, as Encode writes it.
		return analytics.Interaction{}, errs.New(errs.KindInvalid, "field time: %q is outside the years 0001 to 9999 in UTC", clip(rec.Time))
	}
	i := analytics.Interaction{
		Time: t, Cat: rec.Cat, EventKind: rec.EventKind,
		Question: rec.Question, Answer: rec.Answer, Topic: rec.Topic,
		Model: rec.Model, Persona: rec.Persona,
		QuestionID: rec.QuestionID, AnswerID: rec.AnswerID,
		UserID: rec.UserID, ConversationID: rec.ConversationID,
		InteractionID: rec.InteractionID,
		Usage: analytics.Usage{
			InputTokens: deref(rec.InputTokens), OutputTokens: deref(rec.OutputTokens),
			CostUSD: deref(rec.CostUSD), LatencyMS: rec.LatencyMS, FirstTokenMS: rec.FirstTokenMS,
		},
	}
	if f := rec.Feedback; f != nil {
		if f.Rating == "" {
			return analytics.Interaction{}, errs.New(errs.KindInvalid, "missing field: feedback.rating")
		}
		i.Feedback = analytics.Feedback{Rating: f.Rating, Reason: f.Reason, Comment: f.Comment}
	}
	if err := i.Validate(); err != nil {
		return analytics.Interaction{}, err
	}
	return i, nil
}

// jsonError turns encoding/json's errors into messages about the line.
func jsonError(err error) error {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return errs.New(errs.KindInvalid, "bad JSON at byte %d: %v", syntax.Offset, syntax)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		if typ.Field == "" {
			return errs.New(errs.KindInvalid, "bad JSON: want an object, got %s", typ.Value)
		}
		want := "a string"
		switch typ.Type.Kind() {
		case reflect.Int64:
			want = "an integer"
		case reflect.Float64:
			want = "a number"
		case reflect.Struct:
			want = "an object"
		}
		return errs.New(errs.KindInvalid, "field %s: want %s, got %s", typ.Field, want, typ.Value)
	}
	return errs.New(errs.KindInvalid, "bad JSON: %v", err)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// clip shortens a value quoted back in an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func trimLineEnd(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// lineReader splits input into lines without ever holding more than
// MaxLineBytes of one line.
type lineReader struct {
	r    *bufio.Reader
	long []byte // a line that did not fit the reader's buffer
}

// next returns the next line with its line end, whether it was too long
// (its content is then dropped), or io.EOF after the last line. The bytes
// are valid until the next call.
func (lr *lineReader) next() ([]byte, bool, error) {
	frag, err := lr.r.ReadSlice('\n')
	switch {
	case err == nil:
		return frag, false, nil
	case errors.Is(err, io.EOF) && len(frag) > 0:
		return frag, false, nil // a last line without a line end
	case !errors.Is(err, bufio.ErrBufferFull):
		return nil, false, err
	}
	lr.long = append(lr.long[:0], frag...)
	tooLong := false
	for errors.Is(err, bufio.ErrBufferFull) {
		frag, err = lr.r.ReadSlice('\n')
		if tooLong {
			continue
		}
		if len(lr.long)+len(frag) > MaxLineBytes+2 { // +2: room for "\r\n"
			tooLong, lr.long = true, lr.long[:0]
			continue
		}
		lr.long = append(lr.long, frag...)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	return lr.long, tooLong, nil
}
