package wire_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/wire"
)

// module is the module path, and root its directory from here.
const (
	module = "github.com/mcpflow/mcpflow"
	root   = "../.."
)

// jsonRaw is the type of free-form JSON fields.
var jsonRaw = reflect.TypeFor[json.RawMessage]()

// TestEveryMessageThatCrossesRoundTripsThroughTheCodec fills every field of
// each message kind that may cross nodes, through reflection, and requires
// the codec to give the same value back: a field the codec would lose (a
// closure, a channel, a Go error, an unexported field) fails it.
func TestEveryMessageThatCrossesRoundTripsThroughTheCodec(t *testing.T) {
	for _, k := range wire.Kinds() {
		if k.Local != "" {
			continue
		}
		t.Run(k.Name, func(t *testing.T) {
			is := is.New(t)
			var problems []string
			plain(k.Type, k.Name, map[reflect.Type]bool{}, &problems)
			if len(problems) > 0 {
				t.Logf("%s is not plain data:\n%s", k.Name, strings.Join(problems, "\n"))
			}
			is.Equal(len(problems), 0) // every field is plain data

			msg := filled(k.Type, 0).Interface()
			env, err := wire.Encode("kind/id", msg)
			is.NoErr(err) // a message that crosses encodes
			is.Equal(env.GetKind(), k.Name)
			is.Equal(env.GetTarget(), "kind/id")
			back, err := wire.Decode(env)
			is.NoErr(err) // and decodes
			if !reflect.DeepEqual(back, msg) {
				t.Logf("sent     %#v\nreceived %#v", msg, back)
			}
			is.True(reflect.DeepEqual(back, msg)) // the same message comes back
		})
	}
}

func TestANodeLocalMessageOrAStrangerIsRefused(t *testing.T) {
	is := is.New(t)
	for _, k := range wire.Kinds() {
		if k.Local == "" {
			continue
		}
		_, err := wire.Encode("kind/id", reflect.New(k.Type).Elem().Interface())
		is.True(err != nil) // a node-local message never leaves its node
		is.True(strings.Contains(err.Error(), "node-local"))
	}
	type stranger struct{ Reply func() }
	_, err := wire.Encode("kind/id", stranger{})
	is.True(err != nil) // neither does a type of no kind
	_, err = wire.Decode(&wire.Envelope{Kind: "session.FromANewerNode", Body: []byte("{}")})
	is.True(err != nil) // a kind this node does not know is an error
	_, err = wire.Decode(&wire.Envelope{Kind: "session.CallTool", Body: []byte("{")})
	is.True(err != nil) // and so is a broken body
}

// TestEveryMessageTheActorsHandleHasAKind reads the actors' Receive
// switches and the answers (types with a Correlation method) in the
// module, so that a new message type without a kind fails here.
func TestEveryMessageTheActorsHandleHasAKind(t *testing.T) {
	is := is.New(t)
	known := map[string]bool{}
	for _, k := range wire.Kinds() {
		known[k.Type.PkgPath()+"."+k.Type.Name()] = true
	}
	found := messageTypes(t)
	is.True(len(found) >= 10) // the scan found the actors' messages
	for _, name := range found {
		if !known[name] {
			t.Logf("%s is a message between actors but not in wire.Kinds", name)
		}
		is.True(known[name]) // every message has a kind
	}
}

// messageTypes finds the exported mcpflow types that a Receive switch
// handles (a type switch on c.Message()) or that answer a request (they
// have a Correlation method), as "import/path.Name".
func messageTypes(t *testing.T) []string {
	t.Helper()
	is := is.New(t)
	seen := map[string]bool{}
	var out []string
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	fset := token.NewFileSet()
	for _, dir := range []string{"actors", "api", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			pkg := module + "/" + filepath.ToSlash(rel)
			imports := map[string]string{}
			for _, spec := range f.Imports {
				p, _ := strconv.Unquote(spec.Path.Value)
				name := p[strings.LastIndex(p, "/")+1:]
				if spec.Name != nil {
					name = spec.Name.Name
				}
				imports[name] = p
			}
			qualified := func(e ast.Expr) (string, bool) {
				switch x := e.(type) {
				case *ast.Ident:
					return pkg + "." + x.Name, x.IsExported()
				case *ast.SelectorExpr:
					id, ok := x.X.(*ast.Ident)
					if !ok || !x.Sel.IsExported() {
						return "", false
					}
					p, ok := imports[id.Name]
					return p + "." + x.Sel.Name, ok && strings.HasPrefix(p, module+"/")
				}
				return "", false
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.TypeSwitchStmt:
					if !switchesOnMessage(x) {
						return true
					}
					for _, s := range x.Body.List {
						for _, e := range s.(*ast.CaseClause).List {
							if name, ok := qualified(e); ok {
								add(name)
							}
						}
					}
				case *ast.FuncDecl:
					if x.Name.Name == "Correlation" && x.Recv != nil && len(x.Recv.List) == 1 {
						if name, ok := qualified(x.Recv.List[0].Type); ok {
							add(name)
						}
					}
				}
				return true
			})
			return nil
		})
		is.NoErr(err) // the module's sources parse
	}
	return out
}

// switchesOnMessage reports whether s is `switch ... c.Message().(type)`,
// or `switch ... msg.(type)` (a message handed on from Receive, by
// convention named msg).
func switchesOnMessage(s *ast.TypeSwitchStmt) bool {
	var assert *ast.TypeAssertExpr
	switch a := s.Assign.(type) {
	case *ast.AssignStmt:
		assert, _ = a.Rhs[0].(*ast.TypeAssertExpr)
	case *ast.ExprStmt:
		assert, _ = a.X.(*ast.TypeAssertExpr)
	}
	if assert == nil {
		return false
	}
	if id, ok := assert.X.(*ast.Ident); ok {
		return id.Name == "msg"
	}
	call, ok := assert.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Message"
}

// plain reports, into problems, what of t a JSON codec would not carry
// across as it is.
func plain(t reflect.Type, path string, seen map[reflect.Type]bool, problems *[]string) {
	if seen[t] || t == jsonRaw || t == reflect.TypeFor[time.Time]() {
		return
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
	case reflect.Pointer, reflect.Slice, reflect.Array:
		plain(t.Elem(), path+"[]", seen, problems)
	case reflect.Map:
		switch t.Key().Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64: // JSON keys both ways
		default:
			*problems = append(*problems, fmt.Sprintf("%s: map key %s is neither a string nor an integer", path, t.Key()))
		}
		plain(t.Elem(), path+"[k]", seen, problems)
	case reflect.Interface:
		if t.NumMethod() > 0 {
			*problems = append(*problems, fmt.Sprintf("%s: interface %s (a JSON value must be `any`)", path, t))
		}
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			switch {
			case !f.IsExported():
				*problems = append(*problems, fmt.Sprintf("%s.%s: unexported", path, f.Name))
			case f.Tag.Get("json") == "-":
				*problems = append(*problems, fmt.Sprintf("%s.%s: not encoded (json:\"-\")", path, f.Name))
			default:
				plain(f.Type, path+"."+f.Name, seen, problems)
			}
		}
	default:
		*problems = append(*problems, fmt.Sprintf("%s: %s cannot cross a process boundary", path, t))
	}
}

// filled makes a value of t with something in every field: each number
// its own, strings named for their place, one element per slice and map,
// JSON values as strings.
func filled(t reflect.Type, depth int) reflect.Value {
	v := reflect.New(t).Elem()
	n := depth + 1
	switch {
	case t == jsonRaw:
		v.SetBytes([]byte(`{"k":[1,"two"]}`))
		return v
	case t == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2030, 1, 2, 3, 4, 5, 6+n, time.UTC)))
		return v
	}
	switch t.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", n))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(n) + 0.5)
	case reflect.Interface:
		v.Set(reflect.ValueOf(fmt.Sprintf("any%d", n)))
	case reflect.Pointer:
		if depth < 8 {
			v.Set(filled(t.Elem(), n).Addr())
		}
	case reflect.Slice:
		if depth < 8 {
			v.Set(reflect.Append(v, filled(t.Elem(), n)))
		}
	case reflect.Map:
		if depth < 8 {
			v.Set(reflect.MakeMap(t))
			v.SetMapIndex(filled(t.Key(), n), filled(t.Elem(), n))
		}
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				v.Field(i).Set(filled(t.Field(i).Type, n))
			}
		}
	}
	return v
}
