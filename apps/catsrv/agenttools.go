package main

import (
	"context"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catsrv/catsrv/adapters/mcp"
	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
	"github.com/catsrv/catsrv/apps/catsrv/internal/telemetry"
	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/chat"
	"github.com/catsrv/catsrv/ports"
)

// agentTools builds the agent's tools: every CAT's MCP servers
// (adapters/mcp), with ${NAME} in their env and headers filled from the
// environment, and their calls counted in reg. With CATSRV_MCP_EAGER_START
// the servers of cats start now, else at their first use. stop stops
// every server and waits for them: serve calls it after the HTTP server
// has shut down.
func agentTools(cfg *config.Config, cats []catconfig.Cat, reg prometheus.Registerer, logger *slog.Logger) (_ ports.Toolbox, stop func(), _ error) {
	adapter := mcp.New(mcp.Options{Logger: logger, Env: cfg.MCPEnv()})
	expanded := &expandedToolbox{next: adapter, expand: cfg.ExpandMCP, logger: logger}
	tools, err := telemetry.Toolbox(reg, expanded)
	if err != nil {
		return nil, nil, err
	}
	if cfg.MCPEagerStart {
		for _, c := range cats {
			if err := adapter.Start(expanded.cat(c)); err != nil {
				return nil, nil, err
			}
		}
	}
	return tools, func() { _ = adapter.Close() }, nil
}

// expandedToolbox hands its Toolbox each CAT with ${NAME} filled in its
// MCP servers' env and header values. A server naming an unset variable
// is left out (logged once), as one that fails to start would be.
type expandedToolbox struct {
	next   ports.Toolbox
	expand func(catconfig.MCPServer) (catconfig.MCPServer, error)
	logger *slog.Logger
	logged sync.Map // the errors already logged
}

// cat returns c with its servers expanded.
func (e *expandedToolbox) cat(c catconfig.Cat) catconfig.Cat {
	servers := make([]catconfig.MCPServer, 0, len(c.Chat.Agent.MCPServers))
	for _, s := range c.Chat.Agent.MCPServers {
		x, err := e.expand(s)
		if err != nil {
			if _, seen := e.logged.LoadOrStore(c.Name+"\x00"+err.Error(), true); !seen {
				e.logger.Warn("mcp server left out", "cat", c.Name, "server", s.Name, "err", err.Error())
			}
			continue
		}
		servers = append(servers, x)
	}
	c.Chat.Agent.MCPServers = servers
	return c
}

func (e *expandedToolbox) Tools(ctx context.Context, c catconfig.Cat, scope chat.ToolScope) ([]chat.ToolSpec, error) {
	return e.next.Tools(ctx, e.cat(c), scope)
}

func (e *expandedToolbox) Call(ctx context.Context, c catconfig.Cat, scope chat.ToolScope, name string, arguments []byte) (chat.ToolOutput, error) {
	return e.next.Call(ctx, e.cat(c), scope, name, arguments)
}
