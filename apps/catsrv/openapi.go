package main

import (
	"bytes"
	"io"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
)

func openapiCmd(args []string, stdout io.Writer) error {
	fs := newFlags("openapi")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fs.misuse("openapi takes no arguments")
	}
	doc, err := httpapi.OpenAPIDocument()
	if err != nil {
		return err
	}
	// The document ends with one newline, whatever the encoder left.
	_, err = stdout.Write(append(bytes.TrimRight(doc, "\n"), '\n'))
	return err
}
