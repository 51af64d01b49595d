package std

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow/schema"
)

// specCase is one call of a node spec. A case with wantErr expects Run to
// fail with an error containing it; with schemaRejects the spec's input
// schema must reject the input too, so the schema and the body agree.
type specCase struct {
	spec          string
	name          string
	input         Object
	wantOutcome   string
	wantOutput    Object
	wantErr       string
	schemaRejects bool
}

// resolve compiles a declared schema the way the engine will.
func resolve(t *testing.T, s Object) *schema.Compiled {
	t.Helper()
	is := is.New(t)
	compiled, err := schema.New(0).Compile(s)
	is.NoErr(err)
	return compiled
}

// jsonRoundTrip gives a value the shape encoding/json decodes into.
func jsonRoundTrip(t *testing.T, v Object) Object {
	t.Helper()
	is := is.New(t)
	data, err := json.Marshal(v)
	is.NoErr(err)
	var out Object
	is.NoErr(json.Unmarshal(data, &out))
	return out
}

func runSpecCases(t *testing.T, cases []specCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.spec+"/"+tc.name, func(t *testing.T) {
			is := is.New(t)
			spec, found := Lookup(tc.spec)
			is.True(found) // spec is registered
			inSchema := resolve(t, spec.Capability.InputSchema)
			outSchema := resolve(t, spec.Capability.OutputSchema)

			outcome, output, err := spec.Run(tc.input)
			if tc.schemaRejects {
				is.True(inSchema.Validate(jsonRoundTrip(t, tc.input)) != nil) // input schema rejects it too (as decoded JSON, as the engine checks it)
			}
			if tc.wantErr != "" {
				is.True(err != nil) // Run fails
				is.True(strings.Contains(err.Error(), tc.wantErr))
				is.Equal(output, nil)
				return
			}
			is.NoErr(err)
			is.NoErr(inSchema.Validate(jsonRoundTrip(t, tc.input))) // the input as the engine checks it: decoded JSON
			is.Equal(outcome, tc.wantOutcome)
			is.True(slices.Contains(spec.Capability.Outcomes, outcome)) // outcome is declared
			is.Equal(output, tc.wantOutput)
			is.NoErr(outSchema.Validate(map[string]any(output)))
			is.NoErr(outSchema.Validate(map[string]any(jsonRoundTrip(t, output))))
		})
	}
}
