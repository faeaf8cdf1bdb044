package base

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/danielgtaylor/huma/v2"
)

// JSONStreamer is a response body that writes its own JSON, field by field
// and list entry by list entry, so that a large body (the no-limit question
// and answer lists: tens of MB of JSON at 10M interactions) never sits
// whole in memory. Its output must be byte for byte what encoding/json
// gives for the same value, as huma's own format would write it.
type JSONStreamer interface {
	StreamJSON(o *JSONObject)
}

// jsonFormat is huma's JSON format, except that a JSONStreamer body is
// written as it is encoded.
var jsonFormat = huma.Format{
	Marshal: func(w io.Writer, v any) error {
		s, ok := v.(JSONStreamer)
		if !ok {
			return huma.DefaultJSONFormat.Marshal(w, v)
		}
		bw := bufio.NewWriterSize(w, 32<<10)
		o := newJSONObject(bw)
		s.StreamJSON(o)
		o.end()
		if o.err == nil {
			o.err = bw.WriteByte('\n')
		}
		if o.err == nil {
			o.err = bw.Flush()
		}
		return o.err
	},
	Unmarshal: json.Unmarshal,
}

// JSONObject writes one JSON object: its fields in the order they are
// given, each value encoded as huma's JSON format encodes it (no HTML
// escaping). The first write error stops every later write.
type JSONObject struct {
	w      *bufio.Writer
	buf    bytes.Buffer
	enc    *json.Encoder
	fields int
	err    error
}

func newJSONObject(w *bufio.Writer) *JSONObject {
	o := &JSONObject{w: w}
	o.enc = json.NewEncoder(&o.buf)
	o.enc.SetEscapeHTML(false)
	o.err = w.WriteByte('{')
	return o
}

// Field writes one field with an encoded value.
func (o *JSONObject) Field(name string, v any) {
	o.name(name)
	o.value(v)
}

// OmitEmptyPtr writes the field only when p is not nil, as the omitempty
// option does for a pointer.
func OmitEmptyPtr[T any](o *JSONObject, name string, p *T) {
	if p != nil {
		o.Field(name, p)
	}
}

// List writes a field holding a JSON array, one entry at a time; a nil
// list is null, as encoding/json writes it.
func List[T any](o *JSONObject, name string, l []T) {
	o.name(name)
	if l == nil {
		o.write([]byte("null"))
		return
	}
	o.write([]byte{'['})
	for i := range l {
		if i > 0 {
			o.write([]byte{','})
		}
		o.value(&l[i])
	}
	o.write([]byte{']'})
}

func (o *JSONObject) name(name string) {
	if o.fields > 0 {
		o.write([]byte{','})
	}
	o.fields++
	o.value(name)
	o.write([]byte{':'})
}

// value encodes v into the reused buffer and writes it without the
// encoder's trailing newline.
func (o *JSONObject) value(v any) {
	if o.err != nil {
		return
	}
	o.buf.Reset()
	if err := o.enc.Encode(v); err != nil {
		o.err = err
		return
	}
	o.write(bytes.TrimSuffix(o.buf.Bytes(), []byte{'\n'}))
}

func (o *JSONObject) write(b []byte) {
	if o.err == nil {
		_, o.err = o.w.Write(b)
	}
}

func (o *JSONObject) end() { o.write([]byte{'}'}) }
