package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
)

// withCluster is a config file with a PostgreSQL store and the cluster
// block cluster (a JSON object).
func withCluster(cluster string) string {
	return `{"version":1,"server":{"store":{"kind":"postgres","dsn":"host=/run/postgresql dbname=mcpflow"},"cluster":` + cluster + `}}`
}

func TestTheClusterBlockParsesWithItsDefaults(t *testing.T) {
	is := is.New(t)
	f, err := config.Parse([]byte(withCluster(`{"node_id":"node-a","listen":"10.0.0.1:7000"}`)))
	is.NoErr(err)
	c := f.Server.Cluster
	is.Equal(*c, config.Cluster{NodeID: "node-a", Listen: "10.0.0.1:7000"})
	is.Equal(c.AdvertiseAddress(), "10.0.0.1:7000") // the listen address by default
	is.Equal(c.LeaseTTL(), 10*time.Second)          // the default ttl

	t.Setenv("MCPFLOW_NODE", "node_b.eu-1")
	f, err = config.Parse([]byte(withCluster(`{"node_id":"${MCPFLOW_NODE}","listen":"0.0.0.0:7000","advertise":"node-b.internal:7000",
		"lease_ttl_ms":3000,"members":[{"node_id":"node-a","address":"10.0.0.1:7000"},{"node_id":"node_b.eu-1","address":"node-b.internal:7000"}]}`)))
	is.NoErr(err)
	c = f.Server.Cluster
	is.Equal(c.NodeID, "node_b.eu-1")                      // from the environment
	is.Equal(c.AdvertiseAddress(), "node-b.internal:7000") // listens on every interface, reached by its name
	is.Equal(c.LeaseTTL(), 3*time.Second)
	is.Equal(c.Members, []config.ClusterMember{{NodeID: "node-a", Address: "10.0.0.1:7000"}, {NodeID: "node_b.eu-1", Address: "node-b.internal:7000"}})

	f, err = config.Parse([]byte(`{"version":1,"server":{}}`))
	is.NoErr(err)
	is.Equal(f.Server.Cluster, nil) // absent: one node alone
}

func TestTheClusterBlockRefusesWhatNoNodeCanUse(t *testing.T) {
	for _, tt := range []struct{ cluster, says string }{
		{`{"listen":"10.0.0.1:7000"}`, `node_id: node id "" must be 1 to 64`},
		{`{"node_id":"Node-A","listen":"10.0.0.1:7000"}`, `node id "Node-A" must be`},
		{`{"node_id":"` + strings.Repeat("n", 65) + `","listen":"10.0.0.1:7000"}`, `must be 1 to 64`},
		{`{"node_id":"a/b","listen":"10.0.0.1:7000"}`, `node id "a/b" must be`},
		{`{"node_id":"a"}`, "cluster: listen is required"},
		{`{"node_id":"a","listen":"10.0.0.1"}`, `listen "10.0.0.1" must be host:port`},
		{`{"node_id":"a","listen":"10.0.0.1:0"}`, `must have a port from 1 to 65535`},
		{`{"node_id":"a","listen":"0.0.0.0:7000"}`, `listen "0.0.0.0:7000" names every interface`},
		{`{"node_id":"a","listen":"[::]:7000"}`, `names every interface`},
		{`{"node_id":"a","listen":":7000"}`, `set advertise, the host:port other nodes reach it at`},
		{`{"node_id":"a","listen":"0.0.0.0:7000","advertise":"0.0.0.0:7000"}`, `advertise "0.0.0.0:7000" names every interface`},
		{`{"node_id":"a","listen":"0.0.0.0:x","advertise":"10.0.0.1:7000"}`, `listen "0.0.0.0:x" must have a port`},
		{`{"node_id":"a","listen":"10.0.0.1:7000","lease_ttl_ms":999}`, "lease_ttl_ms must be at least 1000"},
		{`{"node_id":"a","listen":"10.0.0.1:7000","lease_ttl_ms":-1}`, "lease_ttl_ms must not be negative"},
		{`{"node_id":"a","listen":"10.0.0.1:7000","members":[{"node_id":"b","address":"10.0.0.2:7000"},{"node_id":"b","address":"10.0.0.3:7000"}]}`, `member "b" is listed twice`},
		{`{"node_id":"a","listen":"10.0.0.1:7000","members":[{"node_id":"B","address":"10.0.0.2:7000"}]}`, `members[0]: node id "B"`},
		{`{"node_id":"a","listen":"10.0.0.1:7000","members":[{"node_id":"b","address":"0.0.0.0:7000"}]}`, `member "b": address "0.0.0.0:7000" names every interface`},
		{`{"node_id":"a","listen":"10.0.0.1:7000","members":[{"node_id":"a","address":"10.0.0.9:7000"}]}`, `member "a" is this node, listed at 10.0.0.9:7000 but advertised at 10.0.0.1:7000`},
		{`{"node_id":"a","listen":"10.0.0.1:7000","peers":[]}`, `unknown field "peers"`},
	} {
		t.Run(tt.cluster, func(t *testing.T) {
			is := is.New(t)
			_, err := config.Parse([]byte(withCluster(tt.cluster)))
			is.True(err != nil)
			is.True(strings.Contains(err.Error(), tt.says)) // says why
		})
	}
}

func TestAClusterNeedsAPostgreSQLStore(t *testing.T) {
	is := is.New(t)
	for _, store := range []string{`{}`, `{"kind":"sqlite"}`} {
		_, err := config.Parse([]byte(`{"version":1,"server":{"store":` + store + `,"cluster":{"node_id":"a","listen":"10.0.0.1:7000"}}}`))
		is.True(err != nil)
		is.True(strings.Contains(err.Error(), `the nodes of a cluster share a PostgreSQL store: set server.store.kind to "postgres"`)) // says what to do
	}
}

func TestASourceNamesTheNodesItMayRunOn(t *testing.T) {
	is := is.New(t)
	f, err := config.Parse([]byte(withSource(`{"kind":"mcp","id":"tool.a","nodes":["node-a","node-c"],"transport":{"kind":"stdio","command":"tool"}}`)))
	is.NoErr(err)
	is.Equal(f.Server.Sources[0].Nodes, []string{"node-a", "node-c"})

	f, err = config.Parse([]byte(withSource(`{"kind":"mcp","id":"tool.a","transport":{"kind":"stdio","command":"tool"}}`)))
	is.NoErr(err)
	is.Equal(len(f.Server.Sources[0].Nodes), 0) // none: any node

	for nodes, says := range map[string]string{
		`["node-a","Node A"]`: `source "tool.a": nodes: node id "Node A" must be`,
		`["node-a","node-a"]`: `source "tool.a": nodes: "node-a" is listed twice`,
		`[""]`:                `source "tool.a": nodes: node id "" must be`,
	} {
		_, err := config.Parse([]byte(withSource(`{"kind":"mcp","id":"tool.a","nodes":` + nodes + `,"transport":{"kind":"stdio","command":"tool"}}`)))
		is.True(err != nil)
		is.True(strings.Contains(err.Error(), says)) // says which and why
	}
}
