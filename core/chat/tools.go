package chat

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
