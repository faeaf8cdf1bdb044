package sqlstore_test

import (
	"github.com/catsrv/catsrv/adapters/sqlstore/sqltest"
)

// The fresh databases come from sqltest, shared with the sibling
// adapters' tests.
var (
	serverDSN = sqltest.ServerDSN
	openStore = sqltest.Open
	backends  = sqltest.Backends()
)
