package sqlite

import (
	"database/sql/driver"

	"modernc.org/sqlite"
)

// moderncDriver is the name modernc.org/sqlite registers its driver
// under, which a store opens its database through unless WithDriver
// names another.
const moderncDriver = "sqlite"

// Function is an SQL function that the store's queries call: a
// deterministic scalar function of one argument, which maps SQL NULL
// (nil) to NULL. The store registers each with modernc's driver; another
// driver that a store opens its database through (WithDriver) must
// define them on each of its connections.
type Function struct {
	Name string
	Call func(arg any) (any, error)
}

// Functions are the SQL functions that the store's queries call.
func Functions() []Function {
	return []Function{{Name: foldSQL, Call: fold}, {Name: timeKeySQL, Call: timeKeyOf}}
}

func init() {
	for _, f := range Functions() {
		sqlite.MustRegisterDeterministicScalarFunction(f.Name, 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			return f.Call(args[0])
		})
	}
}
