package config

import (
	"fmt"
	"maps"
	"regexp"
	"strings"

	"github.com/catsrv/catsrv/core/catconfig"
)

// envRef is a ${NAME} reference in an MCP server's env or header value.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// ExpandMCP returns server with each ${NAME} in its env and header values
// replaced by the environment variable NAME (secrets stay out of the CAT
// files). A reference to an unset variable is an error naming it.
func (c *Config) ExpandMCP(server catconfig.MCPServer) (catconfig.MCPServer, error) {
	vars := map[string]string{}
	for _, kv := range c.env() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	var missing []string
	expand := func(m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		out := maps.Clone(m)
		for k, v := range out {
			out[k] = envRef.ReplaceAllStringFunc(v, func(ref string) string {
				name := envRef.FindStringSubmatch(ref)[1]
				val, ok := vars[name]
				if !ok {
					missing = append(missing, name)
				}
				return val
			})
		}
		return out
	}
	server.Env = expand(server.Env)
	server.Headers = expand(server.Headers)
	if len(missing) > 0 {
		return server, fmt.Errorf("MCP server %s: environment variable %s is not set", server.Name, strings.Join(missing, ", "))
	}
	return server, nil
}

// MCPEnv is the environment stdio MCP servers start with: catsrv's own
// without its CATSRV_ variables, secrets among them.
func (c *Config) MCPEnv() []string {
	var out []string
	for _, kv := range c.env() {
		if !strings.HasPrefix(kv, "CATSRV_") {
			out = append(out, kv)
		}
	}
	return out
}

// env is the environment Load read (none for a Config built otherwise).
func (c *Config) env() []string {
	if c.environ == nil {
		return nil
	}
	return c.environ.vars
}
