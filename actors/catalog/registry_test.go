package catalog_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
)

func snap(id string, tools ...string) catalog.Snapshot {
	s := catalog.Snapshot{ConnectionID: id}
	for _, t := range tools {
		s.Tools = append(s.Tools, catalog.Tool{Name: t, InputSchema: catalog.Object{"type": "object"}})
	}
	return s
}

func TestRegistryKeepsTheLatestSnapshotOfEachConnectionSortedByID(t *testing.T) {
	is := is.New(t)
	r := catalog.NewRegistry([]catalog.Snapshot{snap("web.main", "search"), snap("fake.one", "echo", "counter")})
	r.Put(snap("b.two", "x"))
	r.Put(snap("fake.one", "echo")) // replaces
	all := r.All()
	is.Equal(len(all), 3)
	is.Equal([]string{all[0].ConnectionID, all[1].ConnectionID, all[2].ConnectionID}, []string{"b.two", "fake.one", "web.main"})
	got, ok := r.Get("fake.one")
	is.True(ok)
	is.Equal(len(got.Tools), 1) // the latest snapshot
	_, ok = r.Get("nope")
	is.True(!ok) // an unknown connection has no snapshot
	is.Equal(len(catalog.NewRegistry(nil).All()), 0)

	c, ok := r.Tool("web.main", "search")
	is.True(ok)
	is.Equal(c.Name, "web.main.search")
	_, ok = r.Tool("fake.one", "counter")
	is.True(!ok) // gone with the replaced snapshot

	var names []string
	for _, c := range r.Capabilities(func(id string) bool { return id != "b.two" }) {
		names = append(names, c.Name)
	}
	is.Equal(names, []string{"fake.one.echo", "web.main.search"}) // by connection, usable ones only
}

func TestRegistryFindsAQualifiedNameAtTheLongestUsableConnectionID(t *testing.T) {
	is := is.New(t)
	r := catalog.NewRegistry([]catalog.Snapshot{snap("a.b", "c.d"), snap("a.b.c", "d"), snap("x.y", "z")})
	all := func(string) bool { return true }
	c, ok := r.Find("a.b.c.d", all)
	is.True(ok)
	is.Equal(c.SourceID, "a.b.c") // the longest connection id first
	c, ok = r.Find("a.b.c.d", func(id string) bool { return id != "a.b.c" })
	is.True(ok)
	is.Equal(c.SourceID, "a.b") // then a shorter one
	_, ok = r.Find("x.y.w", all)
	is.True(!ok) // no such tool
	_, ok = r.Find("x.y.z", func(string) bool { return false })
	is.True(!ok) // not usable
	_, ok = r.Find("nodot", all)
	is.True(!ok)
}

// Readers see one consistent version while a writer puts snapshots.
func TestRegistryReadsAreConsistentDuringPuts(t *testing.T) {
	is := is.New(t)
	const n = 200
	r := catalog.NewRegistry(nil)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range n {
			r.Put(snap(fmt.Sprintf("c%03d.default", i), "t"))
		}
	}()
	for seen := 0; seen < n; {
		all := r.All()
		is.True(len(all) >= seen) // a version never loses a connection
		for i := 1; i < len(all); i++ {
			is.True(all[i-1].ConnectionID < all[i].ConnectionID) // sorted, no duplicates
		}
		seen = len(all)
	}
	wg.Wait()
}

// BenchmarkRegistryPut replaces one connection's snapshot among 10, 1,000
// and 10,000:
//
//	go test -run '^$' -bench RegistryPut -benchmem -count 6 ./actors/catalog/
func BenchmarkRegistryPut(b *testing.B) {
	for _, n := range []int{10, 1_000, 10_000} {
		b.Run(fmt.Sprintf("sources=%d", n), func(b *testing.B) {
			snaps := make([]catalog.Snapshot, 0, n)
			for i := range n {
				snaps = append(snaps, snap(fmt.Sprintf("src%05d.default", i), "echo", "search"))
			}
			r := catalog.NewRegistry(snaps)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r.Put(snaps[i%n])
				i++
			}
		})
	}
}

// BenchmarkRegistryHeldBytes measures the heap a registry holds per
// connection when 1,000 connections list the same 28-tool catalog, each
// listing decoded on its own, as their sessions decode it: reported as
// KiB_held/connection (the heap in use after a GC, less the one before).
func BenchmarkRegistryHeldBytes(b *testing.B) {
	const n, tools = 1_000, 28
	listing := manyToolListing(b, tools)
	var held float64
	for b.Loop() {
		before := heapInUse()
		r := catalog.NewRegistry(nil)
		for i := range n {
			var s catalog.Snapshot
			if err := json.Unmarshal(listing, &s); err != nil {
				b.Fatal(err)
			}
			s.ConnectionID = fmt.Sprintf("src%05d.default", i)
			r.Put(s)
		}
		held = float64(heapInUse()-before) / n
		runtime.KeepAlive(r)
	}
	b.ReportMetric(held/1024, "KiB_held/connection")
}

// manyToolListing is the JSON of a snapshot of tools tools, each with an
// input schema of four typed, described properties and an output schema.
func manyToolListing(b *testing.B, tools int) []byte {
	s := catalog.Snapshot{FetchedAtEpochMs: 1, MaxAgeSeconds: catalog.DefaultMaxAgeSeconds, Resources: []catalog.Resource{}, Prompts: []catalog.Prompt{}}
	for i := range tools {
		props := catalog.Object{}
		for j, typ := range []string{"string", "integer", "boolean", "array"} {
			props[fmt.Sprintf("arg%d", j)] = catalog.Object{"type": typ, "description": fmt.Sprintf("argument %d of tool %d, a %s", j, i, typ)}
		}
		s.Tools = append(s.Tools, catalog.Tool{Name: fmt.Sprintf("tool%02d", i), Description: fmt.Sprintf("Tool number %d of the benchmark's server.", i),
			InputSchema:  catalog.Object{"type": "object", "properties": props, "required": []any{"arg0"}},
			OutputSchema: catalog.Object{"type": "object", "properties": catalog.Object{"result": catalog.Object{"type": "string"}}}})
	}
	data, err := json.Marshal(s)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// heapInUse is the heap in use after a full GC.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
