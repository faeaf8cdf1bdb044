package docfiles_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/files/docfiles"
)

func TestStampAndRead(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "docs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a.md", "# A")
	write("b.txt", "b")
	write(".hidden.md", "x")
	write("image.png", "x")
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "escape.txt")); err != nil {
		t.Fatal(err)
	}
	d := docfiles.New(root)
	files, err := d.Read("docs")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Name != "a.md" || string(files[0].Content) != "# A" || files[1].Name != "b.txt" {
		t.Errorf("files %+v", files)
	}
	s1, err := d.Stamp("docs")
	if err != nil {
		t.Fatal(err)
	}
	if s2, _ := d.Stamp("docs"); s2 != s1 {
		t.Error("stamp changed with nothing changed")
	}
	write("a.md", "# A, longer now")
	if err := os.Chtimes(filepath.Join(dir, "a.md"), time.Now(), time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if s3, _ := d.Stamp("docs"); s3 == s1 {
		t.Error("stamp unchanged after a file changed")
	}
	if _, err := d.Read("../x"); err == nil {
		t.Error("a directory outside the configuration directory was read")
	}
	if _, err := d.Stamp("missing"); err == nil {
		t.Error("a missing directory has a stamp")
	}
}
