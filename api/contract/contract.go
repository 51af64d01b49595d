package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// Contract holds the compiled schemas of every method in the manifest. It is safe for
// concurrent use.
type Contract struct {
	methods    map[string]method
	notified   map[string]*validator // params schema of each notification
	components map[string]*validator // compiled on first use
	compiler   *compiler
}

// method holds one method's compiled params and result schemas.
type method struct {
	params    *validator // an object schema built from the param list
	result    *validator
	extension bool
	names     []string // the params' names, in the manifest's order
}

// Load parses the embedded manifest and compiles every method's params and result schemas,
// and checks every default in it against its schema.
func Load() (*Contract, error) { return load(manifestJSON) }

// load parses a manifest and compiles it. Its defaults must match their schemas.
func load(data []byte) (*Contract, error) {
	m, err := parseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("contract: %w", err)
	}
	comp := newCompiler(m.Components.Schemas)
	c := &Contract{methods: make(map[string]method, len(m.Operations)), notified: map[string]*validator{}, components: map[string]*validator{}, compiler: comp}
	for name, node := range m.Components.Schemas {
		c.components[name] = comp.validator(node)
	}
	for _, op := range m.Operations {
		if _, dup := c.methods[op.Method]; dup {
			return nil, fmt.Errorf("contract: method %q listed twice", op.Method)
		}
		meth, err := c.compileMethod(op)
		if err != nil {
			return nil, fmt.Errorf("contract: %s: %w", op.Method, err)
		}
		c.methods[op.Method] = meth
	}
	for _, n := range m.Notifications {
		v := comp.validator(n.Params.Schema)
		if _, err := v.compile(); err != nil {
			return nil, fmt.Errorf("contract: notification %s: compile params schema: %w", n.Method, err)
		}
		c.notified[n.Method] = v
	}
	if err := comp.checkManifestDefaults(m); err != nil {
		return nil, fmt.Errorf("contract: %w", err)
	}
	return c, nil
}

// compileMethod compiles one method's params and result schemas.
func (c *Contract) compileMethod(op operation) (method, error) {
	m := method{params: c.compiler.validator(paramsSchema(op.Params)), result: c.compiler.validator(op.Result.Schema), extension: op.Extension}
	for _, p := range op.Params {
		m.names = append(m.names, p.Name)
	}
	if _, err := m.params.compile(); err != nil {
		return method{}, fmt.Errorf("compile params schema: %w", err)
	}
	if _, err := m.result.compile(); err != nil {
		return method{}, fmt.Errorf("compile result schema: %w", err)
	}
	return m, nil
}

// loadDefault loads the embedded manifest once for Default.
var loadDefault = sync.OnceValues(Load)

// Default returns the contract of the embedded manifest, loaded on first use.
// It panics if the embedded manifest does not load, which the package's tests rule out.
func Default() *Contract {
	c, err := loadDefault()
	if err != nil {
		panic(err)
	}
	return c
}

// Extensions lists, sorted, the methods mcpflow adds to the reference
// contract.
func (c *Contract) Extensions() []string {
	var out []string
	for _, name := range c.Methods() {
		if c.methods[name].extension {
			out = append(out, name)
		}
	}
	return out
}

// Notifications lists, sorted, the notification methods the server
// pushes to subscriptions.
func (c *Contract) Notifications() []string {
	return slices.Sorted(maps.Keys(c.notified))
}

// ValidateNotification checks that params, once encoded as JSON, match the
// params schema of the notification method. Errors are as for
// ValidateResult.
func (c *Contract) ValidateNotification(method string, params any) error {
	v, ok := c.notified[method]
	if !ok {
		return fmt.Errorf("contract: %w %q", ErrUnknownMethod, method)
	}
	value, err := asJSON(params)
	if err != nil {
		return fmt.Errorf("contract: %s params: %w", method, err)
	}
	return c.check(v, value, "params", method)
}

// Has reports whether the contract lists method.
func (c *Contract) Has(method string) bool {
	_, ok := c.methods[method]
	return ok
}

// Params returns the names of method's params, in the manifest's order;
// nil for a method the contract does not list, or one of no params.
func (c *Contract) Params(method string) []string {
	return slices.Clone(c.methods[method].names)
}

// Methods returns the names of all methods, sorted.
func (c *Contract) Methods() []string {
	return slices.Sorted(maps.Keys(c.methods))
}

// ValidateParams checks a request's params against the method's param list. Params must be
// a JSON object (absent or null counts as {}) with no unknown keys, every required key, and
// each value matching its schema.
//
// The error wraps [ErrUnknownMethod] for a method the contract does not list, is a
// *[ValidationError] for params that break the contract, and is anything else only for a
// schema that does not compile.
func (c *Contract) ValidateParams(method string, params json.RawMessage) error {
	m, err := c.method(method)
	if err != nil {
		return err
	}
	value := any(map[string]any{})
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &value); err != nil {
			return &ValidationError{Path: "params", Reason: "must be valid JSON"}
		}
	}
	return c.check(m.params, value, "params", method)
}

// ValidateResult checks that result, once encoded as JSON, matches the method's result schema.
// Errors are as for ValidateParams, plus encoding errors.
func (c *Contract) ValidateResult(method string, result any) error {
	m, err := c.method(method)
	if err != nil {
		return err
	}
	value, err := asJSON(result)
	if err != nil {
		return fmt.Errorf("contract: %s result: %w", method, err)
	}
	return c.check(m.result, value, "result", method)
}

// ValidateComponent checks that value, once encoded as JSON, matches the named component
// schema, such as "WorkflowDeploymentPayload". Paths in the error start with the name.
// Use it where the manifest declares a param as a bare object that the method then reads
// as a component (workflow.deployments.save, workflow.artifacts.save).
func (c *Contract) ValidateComponent(name string, value any) error {
	v, ok := c.components[name]
	if !ok {
		return fmt.Errorf("contract: unknown component %q", name)
	}
	decoded, err := asJSON(value)
	if err != nil {
		return fmt.Errorf("contract: %s: %w", name, err)
	}
	return c.check(v, decoded, name, name)
}

// method looks a method up.
func (c *Contract) method(name string) (method, error) {
	m, ok := c.methods[name]
	if !ok {
		return method{}, fmt.Errorf("contract: %w %q", ErrUnknownMethod, name)
	}
	return m, nil
}

// check validates a decoded value and explains a failure. A schema that does not compile is
// reported as such, with subject naming what was being checked.
func (c *Contract) check(v *validator, value any, path, subject string) error {
	err := v.validate(value)
	if err == nil {
		return nil
	}
	if !errors.Is(err, errCompile) {
		err = c.compiler.explain(v.node, value, path, err) // a *ValidationError, unless a part does not compile
	}
	if errors.Is(err, errCompile) {
		return fmt.Errorf("contract: %s: %w", subject, err)
	}
	return err
}

// asJSON converts a Go value to decoded JSON (maps, slices, float64...), the form the validator reads.
func asJSON(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	var decoded any
	if err := json.Unmarshal(data, &decoded); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return decoded, nil
}
