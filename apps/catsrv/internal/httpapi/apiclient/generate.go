// Package apiclient is a Go client of catsrv's HTTP API, generated with
// oapi-codegen from catsrv's own OpenAPI 3.1 document: gendoc writes the
// document the server serves (openapi.json), then oapi-codegen turns it into
// client.gen.go. The httpapi tests fail when either file is stale.
package apiclient

//go:generate go run ./gendoc -o openapi.json
//go:generate go tool oapi-codegen -config oapi-codegen.yaml openapi.json
