package main

import (
	"context"
	"fmt"
	"io"

	"github.com/catsrv/catsrv/adapters/clock"
	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/adapters/sqlstore"
	"github.com/catsrv/catsrv/adapters/sqlstore/authsql"
	"github.com/catsrv/catsrv/adapters/sqlstore/chatsql"
	"github.com/catsrv/catsrv/apps/catsrv/internal/config"
	"github.com/catsrv/catsrv/core/auth/privacy"
	"github.com/catsrv/catsrv/ports"
)

// eraseCmd erases one person from the database: what DELETE
// /api/v1/auth/users/{user} does, for an operator. Serving instances
// on the same database see the deletions (their column index follows the
// log's deletion feed).
func eraseCmd(ctx context.Context, args []string, env environ, stdout io.Writer) error {
	fs := newFlags("erase")
	config.AddFlags(fs.FlagSet, "db")
	user := fs.String("user", "", "the person: <provider>:<subject> (an account, e.g. provider_b:1234) or a user id (an account id, or the subject of a minted token) (required)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *user == "" || fs.NArg() > 0 {
		return fs.misuse("erase needs --user and takes no arguments")
	}
	cfg, err := config.Load(env, fs.FlagSet)
	if err != nil {
		return err
	}
	store, err := sqlstore.Open(ctx, cfg.DB)
	if err != nil {
		return fmt.Errorf("opening database: %w", err)
	}
	defer store.Close()
	svc, err := privacyService(ctx, store, nil, nil)
	if err != nil {
		return err
	}
	id, err := svc.Resolve(ctx, *user)
	if err != nil {
		return fmt.Errorf("%s: %w", *user, err)
	}
	r, err := svc.Erase(ctx, id, privacy.Actor{By: privacy.ByCLI})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "erased %s: account=%t memory=%t sessions=%d conversations=%d interactions=%d\n",
		privacy.ErasedRef(id), r.Account, r.Memory, r.Sessions, r.Conversations, r.Interactions)
	return err
}

// privacyService wires erasure and export over the database. chats may
// be nil (the CLI opens the conversation store itself); with the column
// index as the warehouse, deletions reach it
// before Erase returns.
func privacyService(ctx context.Context, store *sqlstore.Store, chats *chatsql.Store, rollups ports.RollupStore) (*privacy.Service, error) {
	records, err := authsql.Open(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("auth tables: %w", err)
	}
	if chats == nil {
		if chats, err = chatsql.Open(ctx, store); err != nil {
			return nil, fmt.Errorf("opening the conversation store: %w", err)
		}
	}
	var interactions ports.InteractionEraser = store
	if idx, ok := rollups.(*colindex.Index); ok {
		interactions = colindex.Eraser{InteractionEraser: store, Index: idx}
	}
	return privacy.New(privacy.Deps{
		Users: records, UserEraser: records, Refresh: records, Revocations: records, Memory: records, Audit: records,
		Conversations: chats, Interactions: interactions, Store: chats, Clock: clock.System{},
	}), nil
}
