// Package web holds the admin dashboard's built assets (apps/catsrv/web/dist),
// embedded in the binary so that serving the page needs neither npm nor
// network. The sources are in apps/catsrv/web/src; `make web` rebuilds dist,
// which is committed.
package web

import (
	"embed"
	"io/fs"
)

//go:embed dist
var dist embed.FS

// Assets returns the built page: index.html, the fingerprinted
// app.<hash>.js and style.<hash>.css, their .gz copies and favicon.svg at
// the root.
func Assets() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		// "dist" is a valid path embedded above: Sub cannot fail.
		panic(err)
	}
	return sub
}
