package memstore_test

import (
	"testing"

	"github.com/catsrv/catsrv/adapters/memstore"
)

func TestJobLocks(t *testing.T) {
	var l memstore.JobLocks
	release, ok, err := l.TryLock(t.Context(), "retention")
	if err != nil || !ok {
		t.Fatalf("first TryLock = %v, %v", ok, err)
	}
	if _, ok, _ := l.TryLock(t.Context(), "retention"); ok {
		t.Fatal("a held lock was taken again")
	}
	if _, ok, _ := l.TryLock(t.Context(), "other"); !ok {
		t.Fatal("another job's lock was refused")
	}
	release()
	release() // a second release is harmless
	if _, ok, _ := l.TryLock(t.Context(), "retention"); !ok {
		t.Fatal("a released lock was refused")
	}
}
