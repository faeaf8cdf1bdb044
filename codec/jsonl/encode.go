package jsonl

import (
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// Encode writes i as one line. It refuses an interaction that Decode would
// refuse, so whatever it writes reads back equal.
func Encode(w io.Writer, i analytics.Interaction) error {
	if err := i.Validate(); err != nil {
		return err
	}
	if y := i.Time.UTC().Year(); y < 1 || y > 9999 {
		return errs.New(errs.KindInvalid, "field time: year %d cannot be written in RFC 3339", y)
	}
	_, err := w.Write(AppendLine(nil, i))
	return err
}

// AppendLine appends i to dst as one line, newline included, exactly as
// Encode writes it, and returns the extended buffer. It does not validate:
// it is for writers of many lines that reuse one buffer and know their
// interactions are valid. Invalid UTF-8 is written as U+FFFD.
//
// The time is written in UTC with as many fractional digits as it needs
// (RFC 3339 with nanoseconds); optional fields are left out when empty.
func AppendLine(dst []byte, i analytics.Interaction) []byte {
	dst = append(dst, `{"time":"`...)
	dst = i.Time.UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, '"')
	dst = appendField(dst, "cat", i.Cat)
	dst = appendField(dst, "event_kind", i.EventKind)
	dst = appendField(dst, "question", i.Question)
	dst = appendField(dst, "answer", i.Answer)
	dst = appendField(dst, "topic", i.Topic)
	dst = appendField(dst, "model", i.Model)
	dst = appendField(dst, "persona", i.Persona)
	for _, f := range [...]struct{ name, value string }{
		{"question_id", i.QuestionID}, {"answer_id", i.AnswerID},
		{"user_id", i.UserID}, {"conversation_id", i.ConversationID},
		{"interaction_id", i.InteractionID},
	} {
		if f.value != "" {
			dst = appendField(dst, f.name, f.value)
		}
	}
	return append(appendUsage(dst, i), '}', '\n')
}

// appendUsage appends the usage and feedback fields that are set: token
// counts and cost when not 0, times when measured, feedback when rated.
func appendUsage(dst []byte, i analytics.Interaction) []byte {
	u := i.Usage
	for _, f := range [...]struct {
		name string
		n    int64
	}{{"input_tokens", u.InputTokens}, {"output_tokens", u.OutputTokens}} {
		if f.n != 0 {
			dst = append(dst, ',', '"')
			dst = append(dst, f.name...)
			dst = append(dst, '"', ':')
			dst = strconv.AppendInt(dst, f.n, 10)
		}
	}
	for _, f := range [...]struct {
		name string
		v    *float64
	}{{"latency_ms", u.LatencyMS}, {"first_token_ms", u.FirstTokenMS}, {"cost_usd", costOf(u)}} {
		if f.v != nil {
			dst = append(dst, ',', '"')
			dst = append(dst, f.name...)
			dst = append(dst, '"', ':')
			dst = strconv.AppendFloat(dst, *f.v, 'g', -1, 64)
		}
	}
	if fb := i.Feedback; !fb.IsZero() {
		dst = append(dst, `,"feedback":{"rating":`...)
		dst = appendString(dst, fb.Rating)
		if fb.Reason != "" {
			dst = appendField(dst, "reason", fb.Reason)
		}
		if fb.Comment != "" {
			dst = appendField(dst, "comment", fb.Comment)
		}
		dst = append(dst, '}')
	}
	return dst
}

func costOf(u analytics.Usage) *float64 {
	if u.CostUSD == 0 {
		return nil
	}
	return &u.CostUSD
}

func appendField(dst []byte, name, value string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return appendString(dst, value)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaping only what JSON
// requires: quotes, backslashes and control characters.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
