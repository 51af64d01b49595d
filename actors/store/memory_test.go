package store_test

import (
	"testing"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(_ *testing.T, opts ...store.Option) store.Store { return store.NewMemory(opts...) })
}
