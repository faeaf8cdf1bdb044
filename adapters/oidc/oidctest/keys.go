package oidctest

import (
	"crypto/rand"
	"crypto/rsa"
	"sync"
	"testing"
)

// keyPool holds the 2048-bit RSA keys of the test servers, which take
// tens to hundreds of milliseconds each to generate. A key goes back to
// the pool when the test that took it ends: the servers of one test, and
// of tests running at once, never share a key, and a process generates
// only as many as its tests hold at once.
var keyPool struct {
	mu   sync.Mutex
	free []*rsa.PrivateKey
}

// rsaKey takes a key from the pool, or generates one, until t ends.
func rsaKey(t testing.TB) *rsa.PrivateKey {
	keyPool.mu.Lock()
	var key *rsa.PrivateKey
	if n := len(keyPool.free); n > 0 {
		key, keyPool.free = keyPool.free[n-1], keyPool.free[:n-1]
	}
	keyPool.mu.Unlock()
	if key == nil {
		var err error
		if key, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		keyPool.mu.Lock()
		keyPool.free = append(keyPool.free, key)
		keyPool.mu.Unlock()
	})
	return key
}
