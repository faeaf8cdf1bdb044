package ports

import (
	"context"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
)

// Toolbox gives the agent the tools of a CAT's MCP servers
// (cat.agent.mcp_servers).
type Toolbox interface {
	// Tools lists the tools of the CAT's servers, named as
	// chat.ToolSpec.Name says. A server that fails to start is left out
	// (and retried later), not an error: the agent works with the rest.
	Tools(ctx context.Context, cat catconfig.Cat, scope chat.ToolScope) ([]chat.ToolSpec, error)
	// Call runs the tool named name with arguments (a JSON object),
	// bounded by ctx. A tool that reports a failure is a ToolOutput with
	// IsError, not an error; an error means the call could not be made
	// (unknown tool, server down, ctx ended).
	Call(ctx context.Context, cat catconfig.Cat, scope chat.ToolScope, name string, arguments []byte) (chat.ToolOutput, error)
}
