package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// needTool returns the path of a tool the deployment tests need: under
// -short they skip; without the tool they skip, or fail under CI=true
// (.ci/run installs it).
func needTool(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds or verifies deployment artifacts: skipped under -short")
	}
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (CI=true): .ci/run installs it", name)
		}
		t.Skipf("%s is not installed", name)
	}
	return path
}

// TestContainerImage builds the image of Containerfile with `make image`
// (podman, vfs storage, no registry), takes the binary out of it
// (podman create and podman export: running containers is not permitted
// on the build machines) and runs its version, which carries the version
// the build gave with -ldflags; it then inspects the image: a numeric
// non-root user, the entrypoint catsrv serve, a health check run by the
// binary itself, the volumes.
func TestContainerImage(t *testing.T) {
	podman := needTool(t, "podman")
	tag := "catsrv-test-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	image := "localhost/" + tag + ":v0.0.1-test"
	storage := []string{"--storage-driver", "vfs"}
	run := func(name string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(name, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.String())
		}
		return out
	}
	build := exec.Command("make", "image", "IMAGE="+image, "VERSION=v0.0.1-test", "PODMAN="+podman)
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(podman, append(storage, "rmi", "--force", image)...).Run() })

	// The binary, out of the image's file system.
	id := strings.TrimSpace(string(run(podman, append(storage, "create", image)...)))
	t.Cleanup(func() { _ = exec.Command(podman, append(storage, "rm", "--force", id)...).Run() })
	export := filepath.Join(t.TempDir(), "rootfs.tar")
	run(podman, append(storage, "export", "-o", export, id)...)
	f, err := os.Open(export)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	bin := filepath.Join(t.TempDir(), "catsrv")
	found := map[string]bool{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(h.Name, "./")
		found[strings.TrimSuffix(name, "/")] = true
		if name == "usr/local/bin/catsrv" {
			out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(out, tr); err != nil { //nolint:gosec // our own image's binary
				t.Fatal(err)
			}
			_ = out.Close()
		}
		if name == "var/lib/catsrv/" || name == "var/lib/catsrv" {
			if h.Uid != 65532 || h.Gid != 65532 {
				t.Errorf("/var/lib/catsrv is owned by %d:%d, want the image's user 65532:65532", h.Uid, h.Gid)
			}
		}
	}
	for _, want := range []string{"usr/local/bin/catsrv", "etc/ssl/certs/ca-certificates.crt", "etc/catsrv/demo.yaml", "var/lib/catsrv"} {
		if !found[want] {
			t.Errorf("the image has no /%s", want)
		}
	}
	version := string(run(bin, "version"))
	if !regexp.MustCompile(`^catsrv v0\.0\.1-test \(commit ([0-9a-f]{40}|unknown), go1\.\S+\)\n$`).MatchString(version) {
		t.Errorf("the image's catsrv version printed %q", version)
	}

	var inspected []struct {
		Config struct {
			User         string
			Entrypoint   []string
			Cmd          []string
			Env          []string
			Volumes      map[string]any
			ExposedPorts map[string]any
		}
		HealthCheck *struct {
			Test     []string
			Interval int64
		} `json:"Healthcheck"`
	}
	if err := json.Unmarshal(run(podman, append(storage, "image", "inspect", image)...), &inspected); err != nil || len(inspected) != 1 {
		t.Fatalf("podman image inspect: %v", err)
	}
	img := inspected[0]
	if img.Config.User != "65532:65532" {
		t.Errorf("user %q, want the numeric non-root 65532:65532", img.Config.User)
	}
	if strings.Join(img.Config.Entrypoint, " ") != "/usr/local/bin/catsrv serve" || len(img.Config.Cmd) != 0 {
		t.Errorf("entrypoint %q, cmd %q; want /usr/local/bin/catsrv serve", img.Config.Entrypoint, img.Config.Cmd)
	}
	if img.HealthCheck == nil || strings.Join(img.HealthCheck.Test, " ") != "CMD /usr/local/bin/catsrv healthcheck" {
		t.Errorf("health check %+v, want CMD /usr/local/bin/catsrv healthcheck", img.HealthCheck)
	}
	for _, v := range []string{"/etc/catsrv", "/var/lib/catsrv"} {
		if _, ok := img.Config.Volumes[v]; !ok {
			t.Errorf("volumes %v lack %s", img.Config.Volumes, v)
		}
	}
	env := strings.Join(img.Config.Env, "\n")
	for _, want := range []string{"CATSRV_ADDR=0.0.0.0:8080", "CATSRV_DB=sqlite:/var/lib/catsrv/catsrv.db", "CATSRV_CONFIG_DIR=/etc/catsrv"} {
		if !strings.Contains(env, want) {
			t.Errorf("environment lacks %s:\n%s", want, env)
		}
	}
}

// TestSystemdUnit: systemd-analyze verify accepts deploy/catsrv.service
// without a warning (an unknown or misspelt option warns), with the unit's
// ExecStart pointed at the binary under test.
func TestSystemdUnit(t *testing.T) {
	analyze := needTool(t, "systemd-analyze")
	raw, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "catsrv.service"))
	if err != nil {
		t.Fatal(err)
	}
	unit := strings.ReplaceAll(string(raw), "/usr/local/bin/catsrv", binary)
	for _, want := range []string{"DynamicUser=yes", "NoNewPrivileges=yes", "ProtectSystem=strict", "CapabilityBoundingSet=\n", "ExecStart=" + binary + " serve"} {
		if !strings.Contains(unit, want) {
			t.Errorf("the unit lacks %q", want)
		}
	}
	path := filepath.Join(t.TempDir(), "catsrv.service")
	if err := os.WriteFile(path, []byte(unit), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	broken := filepath.Join(t.TempDir(), "catsrv.service")
	if err := os.WriteFile(broken, []byte(strings.Replace(unit, "[Service]\n", "[Service]\nProtectSystm=strict\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _ := exec.Command(analyze, "verify", broken).CombinedOutput(); !bytes.Contains(out, []byte("ProtectSystm")) {
		t.Errorf("systemd-analyze verify let a misspelt option pass: %s", out)
	}
}
