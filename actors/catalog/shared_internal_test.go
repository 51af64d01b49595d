package catalog

import (
	"testing"

	"github.com/matryer/is"
)

// listing builds a snapshot of connection id with the tools, each with
// its own freshly decoded-looking schema (equal values, distinct maps), as
// a session's listing or a store's load gives them.
func listing(id string, fetched int64, tools ...string) Snapshot {
	s := Snapshot{ConnectionID: id, FetchedAtEpochMs: fetched, MaxAgeSeconds: DefaultMaxAgeSeconds, Resources: []Resource{}, Prompts: []Prompt{}}
	for _, name := range tools {
		s.Tools = append(s.Tools, Tool{Name: name, Description: "the " + name + " tool",
			InputSchema: Object{"type": "object", "properties": Object{"message": Object{"type": "string"}}}})
	}
	return s
}

// Connections whose catalogs are identical hold one decoded copy of it,
// found by content, whether the registry starts with them or they are put
// later; each keeps its own snapshot metadata and capability names, and a
// catalog that differs, if only by an empty output schema where the other
// has none, has a copy of its own.
func TestIdenticalCatalogsShareOneDecodedCopy(t *testing.T) {
	is := is.New(t)
	r := NewRegistry([]Snapshot{listing("a.one", 1, "echo", "counter"), listing("b.two", 2, "echo", "counter")})
	r.Put(listing("c.three", 3, "echo", "counter"))
	other := listing("d.four", 4, "echo", "counter")
	other.Tools[0].OutputSchema = Object{}
	r.Put(other)

	entryOf := func(id string) *entry {
		e, ok := r.entry(id)
		is.True(ok)
		return e
	}
	a, b, c, d := entryOf("a.one"), entryOf("b.two"), entryOf("c.three"), entryOf("d.four")
	is.True(a.c == b.c && b.c == c.c)             // one content for the identical catalogs
	is.True(&a.snap.Tools[0] == &c.snap.Tools[0]) // the tools themselves are shared
	is.True(d.c != a.c)                           // an empty output schema is not none
	is.Equal(len(r.shared), 2)
	is.Equal(a.c.users, 3)

	got, ok := r.Get("c.three")
	is.True(ok)
	is.Equal(got.ConnectionID, "c.three")    // the snapshot's own metadata
	is.Equal(got.FetchedAtEpochMs, int64(3)) // kept per connection
	echo, ok := r.Tool("b.two", "echo")
	is.True(ok)
	is.Equal(echo.Name, "b.two.echo") // capabilities are named per connection
	is.Equal(echo.SourceID, "b.two")
	var names []string
	for _, c := range r.Capabilities(func(id string) bool { return id != "d.four" }) {
		names = append(names, c.Name+"@"+c.SourceID)
	}
	is.Equal(names, []string{"a.one.echo@a.one", "a.one.counter@a.one", "b.two.echo@b.two", "b.two.counter@b.two", "c.three.echo@c.three", "c.three.counter@c.three"}) // listed per connection
	plain, _ := r.Tool("a.one", "echo")
	empty, _ := r.Tool("d.four", "echo")
	is.Equal(len(plain.OutputSchema), 2) // none: the default output schema
	is.Equal(len(empty.OutputSchema), 0) // empty: as the server said

	// Replacing connections lets go of a content once none holds it.
	r.Put(listing("a.one", 5, "echo"))
	r.Put(listing("b.two", 6, "echo"))
	is.Equal(len(r.shared), 3)
	is.Equal(entryOf("c.three").c.users, 1)
	r.Put(listing("c.three", 7, "echo"))
	is.Equal(len(r.shared), 2) // the two-tool catalog is forgotten
	is.True(entryOf("a.one").c == entryOf("c.three").c)
	is.Equal(entryOf("a.one").c.users, 3)
	_, ok = r.Tool("a.one", "counter")
	is.True(!ok) // the latest snapshot's tools only
}
