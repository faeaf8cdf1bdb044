// Package buildinfo is the version of the running catsrv binary: the one
// `catsrv version` prints, the OpenAPI document's info.version, the trace
// resource's service.version and the catsrv_build_info metric's labels.
//
// A release build sets it with the linker (make build and make image do):
//
//	go build -ldflags "-X github.com/catsrv/catsrv/apps/catsrv/internal/buildinfo.version=v1.2.0 \
//	  -X github.com/catsrv/catsrv/apps/catsrv/internal/buildinfo.commit=$(git rev-parse HEAD)"
//
// Otherwise it comes from the Go build information (debug.ReadBuildInfo):
// the module's version when it was built as a released module (go install
// ...@v1.2.0), else "dev", and the VCS revision go build stamps.
package buildinfo

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Set with -ldflags -X; empty when not.
var (
	version string
	commit  string
)

// Dev is the version of a build that names no release: a working tree, a
// commit between releases, a test binary.
const Dev = "dev"

// Unknown is the commit of a build that records none.
const Unknown = "unknown"

// Info is what a build says of itself.
type Info struct {
	Version   string // v1.2.0, or Dev
	Commit    string // the VCS revision, "-dirty" appended for a modified tree; or Unknown
	GoVersion string // go1.26.8
}

// String is the line `catsrv version` prints.
func (i Info) String() string {
	return fmt.Sprintf("catsrv %s (commit %s, %s)", i.Version, i.Commit, i.GoVersion)
}

// Get returns the running binary's Info.
var Get = sync.OnceValue(func() Info {
	bi, _ := debug.ReadBuildInfo()
	return from(bi, version, commit)
})

// pseudo matches the version go build stamps on a commit that is no
// release tag: a pseudo-version (v0.0.0-20261127234040-e049dc0abcde) or a
// modified tree (+dirty).
var pseudo = regexp.MustCompile(`-(0\.)?\d{14}-[0-9a-f]{12}(\+dirty)?$|\+dirty$`)

// from computes Info from the build information (nil when absent) and the
// linker-set values, which win.
func from(bi *debug.BuildInfo, ldVersion, ldCommit string) Info {
	info := Info{Version: ldVersion, Commit: ldCommit, GoVersion: runtime.Version()}
	if bi == nil {
		bi = &debug.BuildInfo{}
	}
	if bi.GoVersion != "" {
		info.GoVersion = bi.GoVersion
	}
	if info.Version == "" {
		v := bi.Main.Version
		if v == "" || v == "(devel)" || pseudo.MatchString(v) {
			v = Dev
		}
		info.Version = v
	}
	if info.Commit == "" {
		var rev string
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		switch {
		case rev == "":
			info.Commit = Unknown
		case modified:
			info.Commit = rev + "-dirty"
		default:
			info.Commit = rev
		}
	}
	info.Version = strings.TrimSpace(info.Version)
	return info
}
