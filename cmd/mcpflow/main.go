// Command mcpflow is the MCP workflow runtime: `mcpflow serve` runs the
// service, and the other commands operate it (see `mcpflow --help` and
// package cli).
package main

import (
	"os"

	"github.com/mcpflow/mcpflow/cmd/mcpflow/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
