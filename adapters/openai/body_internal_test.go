package openai

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzLimitedBody: whatever a model server sends and however the reads
// split it, the body gives at most its bound, then errReplyTooLarge, and
// notes the end mark exactly when the bytes given contain it.
func FuzzLimitedBody(f *testing.F) {
	f.Add([]byte("data: {}\n\ndata: [DONE]\n\n"), uint8(3), uint16(100))
	f.Add([]byte("data: [DO"), uint8(1), uint16(5))
	f.Add([]byte("xxdata: [DONE]"), uint8(7), uint16(14))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8, limit uint16) {
		b := &limitedBody{rc: io.NopCloser(bytes.NewReader(data)), left: int64(limit)}
		buf := make([]byte, int(chunk%16)+1)
		var got []byte
		for {
			n, err := b.Read(buf)
			got = append(got, buf[:n]...)
			if errors.Is(err, errReplyTooLarge) {
				if len(data) <= int(limit) {
					t.Fatalf("too large after %d of %d bytes (limit %d)", len(got), len(data), limit)
				}
				break
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if len(got) > int(limit) || !bytes.Equal(got, data[:len(got)]) {
			t.Fatalf("read %d bytes (limit %d), not a prefix of the input", len(got), limit)
		}
		if b.done != bytes.Contains(got, doneMark) {
			t.Fatalf("done = %v for %q", b.done, got)
		}
	})
}
