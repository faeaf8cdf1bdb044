// Command gendoc writes catsrv's OpenAPI document to a file, for go
// generate: the client in the parent directory is generated from it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
)

func main() {
	out := flag.String("o", "openapi.json", "file to write the OpenAPI 3.1 document to")
	flag.Parse()
	doc, err := httpapi.OpenAPIDocument()
	if err == nil {
		err = os.WriteFile(*out, doc, 0o644) //nolint:gosec // a committed source file, readable like the others

	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
}
