// Package sources owns a node's MCP sources below the API: the source
// registry (the desired state that add, update, enable, disable and
// remove write), its apply (the registry merged with the config by
// ownership, reconciled into the supervisor's session actors and
// published as the effective sources every reader sees), the loading of
// the effective sources at start, and the catalog sink through which the
// supervisor stores, publishes and audits the catalogs its sessions list;
// and a source's diagnosis (Diagnose), and how a connection or a stored
// transport may be shown without a secret (Metadata, ShownTransport);
// what a source is and may do (Source.Policy); and the capabilities
// workflows can use now, found, listed and their sources known
// (Capabilities).
// It records what it decides in the admin event log (actors/audit) and
// knows nothing of the API: its failures are typed (see ErrMalformed and
// its siblings) for the API to map.
package sources
