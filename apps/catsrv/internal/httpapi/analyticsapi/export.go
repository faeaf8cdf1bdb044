package analyticsapi

import (
	"bufio"
	"encoding/csv"
	"io"
	"iter"
	"time"

	"github.com/catsrv/catsrv/codec/jsonl"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
)

// csvHeader names the columns of a CSV export.
var csvHeader = []string{"time", "question", "answer", "topic", "model", "persona", "question_id", "answer_id", "user_id", "conversation_id"}

// writeCSV writes the entries as CSV with a header row. Every cell is made
// safe for spreadsheets (see spreadsheetSafe).
func writeCSV(w io.Writer, rows iter.Seq2[chatlog.Entry, error]) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	cw := csv.NewWriter(bw)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for e, err := range rows {
		if err != nil {
			return err
		}
		record := []string{e.Time.UTC().Format(time.RFC3339Nano), e.Question, e.Answer, e.Topic, e.Model, e.Persona,
			e.QuestionID, e.AnswerID, e.UserID, e.ConversationID}
		for k := range record {
			record[k] = spreadsheetSafe(record[k])
		}
		if err := cw.Write(record); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

// spreadsheetSafe prefixes a quote to a cell that a spreadsheet would read
// as a formula (CSV injection): users' questions are untrusted, and an
// admin opening the export must not run them.
func spreadsheetSafe(cell string) string {
	if cell == "" {
		return cell
	}
	switch cell[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + cell
	}
	return cell
}

// writeJSONL writes the entries in the import format of catsrv import, so
// an export can be loaded into another server.
func writeJSONL(w io.Writer, cat string, rows iter.Seq2[chatlog.Entry, error]) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var line []byte
	for e, err := range rows {
		if err != nil {
			return err
		}
		i := e.Interaction
		i.Cat, i.EventKind = cat, analytics.EventKindAPI
		line = jsonl.AppendLine(line[:0], i)
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}
