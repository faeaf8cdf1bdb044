// Package client is the Go client of catsrv's HTTP API, generated with
// oapi-codegen from the OpenAPI 3.1 document the catsrv binary serves at
// /openapi.json (and prints with `catsrv openapi`).
//
// Create a client with [NewClientWithResponses] for the server's base URL,
// authenticate with a bearer token through [WithRequestEditorFn], then call
// one method per operation: GetAllWarehouseWithResponse for
// GET /api/v1/analytics/all_warehouse, PostChatWithResponse for
// POST /api/v1/cat/chat, and so on. Each answer carries the raw body and
// status, and the decoded body of each documented JSON response (JSON200,
// JSON401, ...).
//
// The chat operations answer Server-Sent Events when the request sets
// Stream: the answer then has no JSON200, and its Body holds the whole
// event stream. Read a stream as it arrives with the plain [Client]
// (PostChat returns the *http.Response).
//
// The package holds two generated files: openapi.json, the document, and
// client.gen.go, the client. go generate rewrites both from the binary;
// the tests of apps/catsrv fail when either differs from what the binary
// serves.
package client

// The generated file has no package comment (oapi-codegen.yaml overrides
// the generator's header), so go doc shows this one alone.

//go:generate go run ./internal/gendoc -o openapi.json
//go:generate go tool oapi-codegen -config oapi-codegen.yaml openapi.json
