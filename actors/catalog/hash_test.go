package catalog_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
)

func TestSchemaHashMatchesPythonCanonicalJSON(t *testing.T) {
	is := is.New(t)
	// python3 -c 'import json,hashlib;print(hashlib.sha256(json.dumps(
	//   {"type":"object","properties":{"b":{"title":"é<"},"a":{}}},
	//   sort_keys=True,separators=(",",":"),ensure_ascii=True).encode()).hexdigest())'
	h, err := catalog.SchemaHash(catalog.Object{"type": "object", "properties": catalog.Object{"b": catalog.Object{"title": "é<"}, "a": catalog.Object{}}})
	is.NoErr(err)
	is.Equal(h, "sha256:eb964719f6bfc76db64ceb1b486123ae3d97e2c373e65dea6a1fc5e8d1593823")
}
