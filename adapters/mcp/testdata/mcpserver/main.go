// Command mcpserver is the MCP server of adapters/mcp's tests: over stdio
// by default, over streamable HTTP with -http ADDR, or over the older SSE
// transport with -sse ADDR (it prints "listening http://HOST:PORT" on
// stdout). Its tools: echo, add, slow (sleeps), fail (reports a failure),
// grow (adds a tool, so clients get tools/list_changed), whoami (the
// request's X-User and X-Cat headers), pid, crash (exits).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type text struct {
	Text string `json:"text"`
}

type pair struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type seconds struct {
	Seconds float64 `json:"seconds"`
}

type name struct {
	Name string `json:"name"`
}

type none struct{}

func reply(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "catsrv-test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text."}, func(_ context.Context, _ *mcp.CallToolRequest, in text) (*mcp.CallToolResult, any, error) {
		return reply(in.Text), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds a and b."}, func(_ context.Context, _ *mcp.CallToolRequest, in pair) (*mcp.CallToolResult, any, error) {
		return reply(strconv.FormatFloat(in.A+in.B, 'f', -1, 64)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Sleeps."}, func(ctx context.Context, _ *mcp.CallToolRequest, in seconds) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(time.Duration(in.Seconds * float64(time.Second))):
			return reply("slept"), nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fails."}, func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		return nil, nil, fmt.Errorf("failed on purpose")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Adds a tool named name."}, func(_ context.Context, _ *mcp.CallToolRequest, in name) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(s, &mcp.Tool{Name: in.Name, Description: "Grown."}, func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return reply("grown " + in.Name), nil, nil
		})
		return reply("added " + in.Name), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "The X-User and X-Cat headers."}, func(_ context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		var h http.Header
		if req.Extra != nil {
			h = req.Extra.Header
		}
		return reply("user=" + h.Get("X-User") + " cat=" + h.Get("X-Cat")), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "The process id."}, func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		return reply(strconv.Itoa(os.Getpid())), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits."}, func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	return s
}

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address")
	sseAddr := flag.String("sse", "", "serve the SSE transport on this address")
	flag.Parse()
	s := newServer()
	var h http.Handler
	addr := *httpAddr
	switch {
	case *httpAddr != "":
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	case *sseAddr != "":
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
		addr = *sseAddr
	default:
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, h)) //nolint:gosec // a test server
}
