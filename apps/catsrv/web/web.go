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

//go:embed apidocs
var apidocs embed.FS

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

// APIDocs returns the API reference page's assets (apps/catsrv/web/apidocs):
// Stoplight Elements' web components, elements-<version>.js.gz and
// elements-<version>.css.gz, copied and compressed by tools/apidocs (make
// apidocs) from the npm package its package-lock.json pins.
func APIDocs() fs.FS {
	sub, err := fs.Sub(apidocs, "apidocs")
	if err != nil {
		panic(err) // a valid path embedded above: Sub cannot fail
	}
	return sub
}
