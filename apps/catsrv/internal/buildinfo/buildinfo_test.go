package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFrom(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, c := range []struct {
		name                string
		bi                  *debug.BuildInfo
		ldVersion, ldCommit string
		want                Info
	}{
		{"no build info", nil, "", "", Info{Dev, Unknown, runtime.Version()}},
		{"test binary", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "", "", Info{Dev, Unknown, "go1.26.8"}},
		{"go build of a commit", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261127234040-e049dc0abcde"}, Settings: vcs("e049dc0abcde", "false")}, "", "",
			Info{Dev, "e049dc0abcde", "go1.26.8"}},
		{"go build of a modified tree", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.1-0.20261127234040-e049dc0abcde+dirty"}, Settings: vcs("e049dc0abcde", "true")}, "", "",
			Info{Dev, "e049dc0abcde-dirty", "go1.26.8"}},
		{"go install of a release", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0"}}, "", "", Info{"v1.2.0", Unknown, "go1.26.8"}},
		{"linker values win", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs("e049dc0abcde", "true")}, "v1.3.0", "abc123",
			Info{"v1.3.0", "abc123", "go1.26.8"}},
	} {
		if got := from(c.bi, c.ldVersion, c.ldCommit); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	if got := (Info{"v1.2.0", "abc", "go1.26.8"}).String(); got != "catsrv v1.2.0 (commit abc, go1.26.8)" {
		t.Errorf("String() = %q", got)
	}
}
