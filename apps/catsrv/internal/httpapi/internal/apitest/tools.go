package apitest

import (
	"context"
	"sync"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/core/errs"
)

// ToolsCat is the chat tests' CAT of the agent with tools: its model is
// ChatEnv.Scripted, its MCP servers (files, crm) ChatEnv.Tools, its policy
// "crm/delete_* => ask", "crm/secret_* => deny".
const ToolsCat = "tools"

// Toolbox is an in-memory ports.Toolbox for the HTTP tests: tools by
// their model-facing name, each a function. The MCP adapter has tests of
// its own over real servers.
type Toolbox struct {
	mu    sync.Mutex
	specs []chat.ToolSpec
	funcs map[string]func(ctx context.Context, args []byte) (chat.ToolOutput, error)
}

// Add offers server's tool, run by f.
func (b *Toolbox) Add(server, tool string, f func(ctx context.Context, args []byte) (chat.ToolOutput, error)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	name := server + "__" + tool
	b.specs = append(b.specs, chat.ToolSpec{Name: name, Server: server, Tool: tool, Description: "The " + tool + " tool.",
		Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)})
	if b.funcs == nil {
		b.funcs = map[string]func(context.Context, []byte) (chat.ToolOutput, error){}
	}
	b.funcs[name] = f
}

// Tools lists the tools added.
func (b *Toolbox) Tools(context.Context, catconfig.Cat, chat.ToolScope) ([]chat.ToolSpec, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]chat.ToolSpec(nil), b.specs...), nil
}

// Call runs the named tool.
func (b *Toolbox) Call(ctx context.Context, _ catconfig.Cat, _ chat.ToolScope, name string, args []byte) (chat.ToolOutput, error) {
	b.mu.Lock()
	f, ok := b.funcs[name]
	b.mu.Unlock()
	if !ok {
		return chat.ToolOutput{}, errs.New(errs.KindNotFound, "no tool %q", name)
	}
	return f(ctx, args)
}
