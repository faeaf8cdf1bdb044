package main

import (
	"io"

	"github.com/catsrv/catsrv/apps/catsrv/internal/httpapi"
)

func openapiCmd(stdout io.Writer) error {
	doc, err := httpapi.OpenAPIDocument()
	if err != nil {
		return err
	}
	if _, err := stdout.Write(doc); err != nil {
		return err
	}
	_, err = io.WriteString(stdout, "\n")
	return err
}
