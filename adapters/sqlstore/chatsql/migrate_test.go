package chatsql

import (
	"testing"

	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
)

// TestOverrideVersionsMigration brings a chat schema of the release
// before shared runtime configuration (step 1, overrides without a
// version) to the current one: the stored documents are read with a
// version, the next save gets a higher one, and a document an older
// instance writes during a rolling deploy (no version) is still loaded
// at start-up.
func TestOverrideVersionsMigration(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range sqltest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			ctx := t.Context()
			log := sqltest.Open(t, b.DSN(t))
			if err := log.Migrate(ctx, Component, migrations[:1]); err != nil {
				t.Fatal(err)
			}
			if _, err := log.DB().ExecContext(ctx, `INSERT INTO chat_cat_overrides (cat, doc) VALUES (?, ?)`, "demo", []byte(`{"chat_mode":"agent"}`)); err != nil {
				t.Fatal(err)
			}
			s, err := Open(ctx, log)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.CatOverridesSince(ctx, 0)
			if err != nil || len(got) != 1 || got[0].Cat != "demo" || got[0].Version < 1 || string(got[0].Doc) != `{"chat_mode":"agent"}` {
				t.Fatalf("after the migration: %+v %v", got, err)
			}
			v, err := s.SaveCatOverride(ctx, "demo", got[0].Version, []byte(`{"chat_mode":"custom"}`))
			if err != nil || v <= got[0].Version {
				t.Fatalf("save after the migration: version %d after %d, %v", v, got[0].Version, err)
			}
			// An instance of the older release saves as it always did.
			if _, err := log.DB().ExecContext(ctx, `INSERT INTO chat_cat_overrides (cat, doc) VALUES (?, ?)`, "shop", []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			all, err := s.CatOverridesSince(ctx, 0)
			if err != nil || len(all) != 2 || all[0].Cat != "shop" || all[0].Version != 0 {
				t.Fatalf("every document: %+v %v", all, err)
			}
			if newer, err := s.CatOverridesSince(ctx, got[0].Version); err != nil || len(newer) != 1 || newer[0].Version != v {
				t.Fatalf("since %d: %+v %v", got[0].Version, newer, err)
			}
		})
	}
}
