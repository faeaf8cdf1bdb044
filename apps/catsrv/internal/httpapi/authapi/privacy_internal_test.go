package authapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/auth"
	"github.com/catsrv/catsrv/core/auth/privacy"
	"github.com/catsrv/catsrv/core/chat"
)

// TestWriteExportStreams checks that the export writes each conversation
// before it reads the next (the writer holds conversation k when k+1 is
// asked for), and that the whole is one valid document.
func TestWriteExportStreams(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var out bytes.Buffer
	threads := func(yield func(privacy.Thread, error) bool) {
		for k := range 3 {
			if k > 0 && !strings.Contains(out.String(), fmt.Sprintf(`"id":"c%d"`, k-1)) {
				t.Errorf("conversation %d read before conversation %d was written: %s", k, k-1, out.String())
			}
			th := privacy.Thread{Conversation: chat.Conversation{ID: fmt.Sprintf("c%d", k), Owner: chat.Owner{Cat: "demo", UserID: "u"}, CreatedAt: at, UpdatedAt: at},
				Messages: []chat.Message{{Role: chat.RoleUser, Content: "hi", Time: at}}}
			if !yield(th, nil) {
				return
			}
		}
	}
	head := exportHead(privacy.Profile{UserID: "u", Memory: auth.Memory{}}, at)
	if err := writeExport(&out, head, threads); err != nil {
		t.Fatal(err)
	}
	var doc ExportDocument
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("not one document: %v\n%s", err, out.String())
	}
	if doc.UserID != "u" || doc.Account != nil || len(doc.Conversations) != 3 || doc.Conversations[2].Messages[0].Content != "hi" {
		t.Fatalf("document: %+v", doc)
	}
}

// TestWriteExportStopsOnError: a failure after the first byte ends the
// document early, so that no client takes it for a whole export.
func TestWriteExportStopsOnError(t *testing.T) {
	var out bytes.Buffer
	boom := errors.New("store failed")
	threads := func(yield func(privacy.Thread, error) bool) { yield(privacy.Thread{}, boom) }
	if err := writeExport(&out, exportHead(privacy.Profile{UserID: "u"}, time.Now()), threads); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if json.Valid(out.Bytes()) {
		t.Fatalf("a failed export is valid JSON: %s", out.String())
	}
}
