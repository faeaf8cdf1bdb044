// Package core is the root of catsrv's domain packages. It holds no code of
// its own: its test enforces the dependency rule that nothing under core
// imports anything outward (HTTP, SQL, frameworks, configuration loaders).
package core
