// Command gendoc writes the OpenAPI document the catsrv binary prints
// (`catsrv openapi`) to a file, for go generate: the client is generated
// from it. It runs the binary's command rather than importing the server's
// packages, so the public client depends on nothing internal.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
)

func main() {
	out := flag.String("o", "openapi.json", "file to write the OpenAPI 3.1 document to")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	cmd := exec.Command("go", "run", "github.com/catsrv/catsrv/apps/catsrv", "openapi")
	cmd.Stderr = os.Stderr
	doc, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("catsrv openapi: %w", err)
	}
	// One final newline, whatever the command ends its output with.
	doc = append(bytes.TrimRight(doc, "\n"), '\n')
	return os.WriteFile(out, doc, 0o644) //nolint:gosec // a committed source file, readable like the others
}
