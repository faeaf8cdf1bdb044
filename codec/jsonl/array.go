package jsonl

import (
	"encoding/json"
	"errors"
	"io"
	"iter"

	"github.com/catsrv/catsrv/core/errs"
)

// DecodeArray yields the elements of one JSON array of interactions (the
// import format's objects, as `application/json`), valid or not, each as a
// Line whose No is the element's 1-based position. An element is checked
// exactly as a line of Decode is. Input that is not one JSON array (a
// syntax error, anything after the closing bracket) ends the sequence with
// a Line carrying an errs.KindInvalid error, numbered after the last
// element read; a failing reader ends it with a ReadFailed Line. The
// caller bounds the input: the array is read element by element, but one
// element may be as large as the input.
func DecodeArray(r io.Reader) iter.Seq[Line] { return DecodeArrayFor(r, "") }

// DecodeArrayFor is DecodeArray with cat as the CAT of every element that
// leaves its cat out.
func DecodeArrayFor(r io.Reader, cat string) iter.Seq[Line] {
	return func(yield func(Line) bool) {
		src := &failReader{r: r}
		dec := json.NewDecoder(src)
		dec.UseNumber()
		no := 1
		fail := func(err error) {
			var syntax *json.SyntaxError
			switch {
			case src.err != nil:
				yield(Line{No: ReadFailed, Err: errs.Wrap(errs.KindUnavailable, src.err, "reading the input failed")})
			case errors.As(err, &syntax):
				yield(Line{No: no, Err: errs.New(errs.KindInvalid, "bad JSON at byte %d of the body: %v", syntax.Offset, syntax)})
			case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
				yield(Line{No: no, Err: errs.New(errs.KindInvalid, "bad JSON: the body ends inside the array")})
			default:
				yield(Line{No: no, Err: errs.New(errs.KindInvalid, "bad JSON: want an array of interactions")})
			}
		}
		tok, err := dec.Token()
		if err != nil {
			fail(err)
			return
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			yield(Line{No: no, Err: errs.New(errs.KindInvalid, "bad JSON: want an array of interactions")})
			return
		}
		ld := lineDecoder{cat: cat}
		var raw json.RawMessage
		for ; dec.More(); no++ {
			raw = raw[:0]
			if err := dec.Decode(&raw); err != nil {
				fail(err)
				return
			}
			line := Line{No: no}
			if len(raw) > MaxLineBytes {
				line.Err = errs.New(errs.KindTooLarge, "element is longer than %d bytes", MaxLineBytes)
			} else {
				line.Interaction, line.Err = ld.decode(raw)
			}
			if !yield(line) {
				return
			}
		}
		if _, err := dec.Token(); err != nil { // the closing bracket
			fail(err)
			return
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			if err == nil {
				err = errs.New(errs.KindInvalid, "bad JSON: more after the array")
				yield(Line{No: no, Err: err})
				return
			}
			fail(err)
		}
	}
}

// failReader remembers the first error of its reader other than io.EOF,
// so that a failing input is told apart from bad JSON.
type failReader struct {
	r   io.Reader
	err error
}

func (f *failReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && f.err == nil {
		f.err = err
	}
	return n, err
}
