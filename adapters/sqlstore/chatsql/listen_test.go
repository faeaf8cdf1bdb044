package chatsql_test

import (
	"context"
	"database/sql"
	"sync/atomic"
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/sqlstore/chatsql"
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
)

// TestListenOverridesWakesOnSavesAndSurvivesAKilledConnection: a save
// wakes the listener (the notice is sent by the saving transaction);
// after its backend is killed, the listener reconnects and the next save
// wakes it again. The database is the test's own, so no other test's
// notices reach it.
func TestListenOverridesWakesOnSavesAndSurvivesAKilledConnection(t *testing.T) {
	dsn := sqltest.PostgresDatabaseDSN(t, nil)
	_, s := open(t, dsn)
	ctx, cancel := context.WithCancel(t.Context())
	wakes := make(chan struct{}, 100)
	var reported atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		chatsql.ListenOverrides(ctx, dsn, func() { wakes <- struct{}{} }, func(error) { reported.Add(1) })
	}()
	defer func() { cancel(); <-done }()

	await := func(what string) {
		t.Helper()
		select {
		case <-wakes:
		case <-time.After(30 * time.Second):
			t.Fatalf("no wake %s", what)
		}
	}
	drained := func() {
		t.Helper()
		for {
			select {
			case <-wakes:
			default:
				return
			}
		}
	}
	await("when listening starts")
	var version int64
	save := func(doc string) {
		t.Helper()
		v, err := s.SaveCatOverride(t.Context(), "demo", version, []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		version = v
	}
	save(`{"chat_mode":"agent"}`)
	await("after a save")

	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()
	var killed int
	if err := admin.QueryRowContext(t.Context(), `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = $1 AND datname = current_database()) k`, chatsql.ListenerApplicationName).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed != 1 {
		t.Fatalf("killed %d listening connections, want 1", killed)
	}
	await("when listening again after the kill")
	if reported.Load() == 0 {
		t.Fatal("the lost connection was not reported")
	}
	drained()
	save(`{"chat_mode":"legacy"}`)
	await("after a save on the new connection")
}
