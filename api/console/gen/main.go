// Command gen writes the console's typed TypeScript client
// (web/src/api/generated.ts) from the contract's embedded manifest: a
// type per component schema, the params and result of every method, the
// notifications, and a client with one function per method.
//
// Run it with `go generate ./api/console`; its test fails when the
// committed file differs from what it would write.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/mcpflow/mcpflow/api/contract"
)

func main() {
	out := flag.String("out", "web/src/api/generated.ts", "the file to write")
	flag.Parse()
	data, err := render(contract.Manifest())
	if err == nil {
		err = os.WriteFile(*out, data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
