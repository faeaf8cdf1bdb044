package chat

import "time"

// ToolSpec is one tool the agent may offer the model.
type ToolSpec struct {
	// Name is what the model calls: "<server>__<tool>" for an MCP tool
	// (OpenAI's rules: [a-zA-Z0-9_-], at most 64), or a built-in's name.
	Name string
	// Server and Tool are the MCP server's name and the tool's own name
	// (Server empty for a built-in); the policy matches "<server>/<tool>".
	Server, Tool string
	Description  string
	// Parameters is the JSON Schema object of the arguments.
	Parameters []byte
}

// ToolScope is who a tool call acts for: an MCP server's headers may
// name them ({{user}}, {{cat}}).
type ToolScope struct {
	Cat, User string
}

// ToolOutput is what one tool call returned.
type ToolOutput struct {
	Content string
	// IsError is true when the tool ran and reported a failure.
	IsError bool
}

// RoleTool is the role of a tool result message.
const RoleTool = "tool"

// ToolCall is one call a model asked for, as chat-completions APIs carry
// it: the call's id, the tool's name and its arguments (JSON text, as the
// model wrote it: it may be invalid).
type ToolCall struct {
	ID, Name, Arguments string
}

// Tool call outcomes, stored with each tool message and audited.
const (
	OutcomeOK      = "ok"      // the tool ran and succeeded
	OutcomeError   = "error"   // the tool ran and reported a failure, or could not be reached
	OutcomeTimeout = "timeout" // the tool did not answer within tool_timeout_seconds
	OutcomeDenied  = "denied"  // the policy or a person refused the call, or no decision came in time
	OutcomeInvalid = "invalid" // unknown tool or arguments that are not a JSON object
)

// MaxToolResultBytes bounds a stored tool result; a longer one is cut
// with ToolResultCutMarker at its end.
const MaxToolResultBytes = 32 << 10

// ToolResultCutMarker ends a tool result that was cut.
const ToolResultCutMarker = "\n[… result cut: longer than 32 KiB]"

// CutText returns s cut to at most max bytes on a rune boundary, with
// marker appended (within max) when it was cut.
func CutText(s string, max int, marker string) string {
	if len(s) <= max {
		return s
	}
	n := max - len(marker)
	if n < 0 {
		n = 0
	}
	for n > 0 && n < len(s) && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + marker
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// SearchText is the text of a message that conversation search sees: its
// content and, for tool calls and results, the tools' names, so a search
// for a tool's name finds the conversations that called it.
func SearchText(m Message) string {
	text := m.Content
	for _, c := range m.ToolCalls {
		text += " " + c.Name
	}
	if m.ToolName != "" {
		text += " " + m.ToolName
	}
	return text
}

// Stream event kinds of a turn (Event.Kind).
const (
	EventDelta            = "delta"
	EventToolCall         = "tool_call"
	EventToolResult       = "tool_result"
	EventApprovalRequired = "approval_required"
)

// Event is one thing a streamed turn reports as it happens: a piece of
// the answer's text, a tool call, its result, or a call waiting for a
// person's approval.
type Event struct {
	Kind string
	// Text is a delta's text.
	Text string
	// Call is the tool call of tool_call, tool_result and
	// approval_required events.
	Call ToolCall
	// OK and Content are a tool result's success and text (the event's
	// own cut of it).
	OK      bool
	Content string
	// ApprovalID and ExpiresAt name a pending approval.
	ApprovalID string
	ExpiresAt  time.Time
}
