package std

import (
	"slices"
	"sort"
	"testing"

	"github.com/matryer/is"
	"github.com/mcpflow/mcpflow/actors/catalog"
)

var wantSpecNames = []string{
	"wf.recipes.extract_text_content",
	"wf.std.coalesce",
	"wf.std.concat",
	"wf.std.constant",
	"wf.std.default_if_none",
	"wf.std.extract_field",
	"wf.std.filter_items",
	"wf.std.filter_items_present",
	"wf.std.first_item",
	"wf.std.first_item_maybe",
	"wf.std.first_item_or_none",
	"wf.std.is_empty",
	"wf.std.last_item",
	"wf.std.last_item_or_none",
	"wf.std.length",
	"wf.std.pick_key",
	"wf.std.pick_path",
	"wf.std.project_fields",
	"wf.std.rename_fields",
	"wf.std.runtime_error",
	"wf.std.truthy",
}

func TestSpecsListsEverySpecSortedByName(t *testing.T) {
	is := is.New(t)
	caps := Specs()
	names := make([]string, len(caps))
	for i, c := range caps {
		names[i] = c.Name
	}
	is.Equal(names, wantSpecNames)
	is.True(sort.StringsAreSorted(names))
}

func TestSpecCapabilitiesAreWellFormed(t *testing.T) {
	for _, c := range Specs() {
		t.Run(c.Name, func(t *testing.T) {
			is := is.New(t)
			is.True(c.Platform)
			is.True(IsSource(c.SourceID))
			is.Equal(c.Name, c.SourceID+"."+c.LocalName)
			is.True(c.Description != "")
			is.True(len(c.Outcomes) > 0)
			for _, schema := range []catalog.Object{c.InputSchema, c.OutputSchema} {
				is.Equal(schema["type"], "object")
				props, isObject := schema["properties"].(map[string]any)
				is.True(isObject) // properties is an object
				for _, name := range catalog.Required(schema) {
					_, declared := props[name]
					is.True(declared) // every required field is a declared property
				}
				resolve(t, schema) // compiles as JSON Schema
			}
			spec, found := Lookup(c.Name)
			is.True(found)
			is.True(spec.Run != nil)
		})
	}
}

func TestEmptyObjectSatisfiesNoSpecWithRequiredInput(t *testing.T) {
	for _, c := range Specs() {
		t.Run(c.Name, func(t *testing.T) {
			is := is.New(t)
			rejects := resolve(t, c.InputSchema).Validate(map[string]any{}) != nil
			is.Equal(rejects, len(catalog.Required(c.InputSchema)) > 0)
		})
	}
}

func TestLookupUnknownSpec(t *testing.T) {
	is := is.New(t)
	for _, name := range []string{"", "wf.std", "wf.std.nope", "std.constant", "wf.std.replace"} {
		_, found := Lookup(name)
		is.True(!found)
	}
}

func TestLookupReturnsIndependentCopies(t *testing.T) {
	is := is.New(t)
	first, _ := Lookup("wf.std.concat")
	first.Capability.InputSchema["properties"].(map[string]any)["items"] = "broken"
	first.Capability.Outcomes[0] = "broken"
	Specs()[0].InputSchema["type"] = "broken"

	again, _ := Lookup("wf.std.concat")
	is.Equal(again.Capability.Outcomes, []string{OutcomeOK})
	_, isSchema := again.Capability.InputSchema["properties"].(map[string]any)["items"].(map[string]any)
	is.True(isSchema)
	is.Equal(Specs()[0].InputSchema["type"], "object")
}

func TestSequenceContractsAgreeOnEmptyLists(t *testing.T) {
	is := is.New(t)
	for _, name := range []string{"wf.std.first_item", "wf.std.last_item"} {
		spec, _ := Lookup(name)
		items := spec.Capability.InputSchema["properties"].(map[string]any)["items"].(map[string]any)
		is.Equal(items["minItems"], 1)
	}
	for _, name := range []string{"wf.std.first_item_maybe", "wf.std.first_item_or_none", "wf.std.last_item_or_none", "wf.std.length", "wf.std.is_empty"} {
		spec, _ := Lookup(name)
		is.NoErr(resolve(t, spec.Capability.InputSchema).Validate(map[string]any{"items": []any{}}))
	}
}

// Every spec has a success case (runtime_error excepted: it only fails)
// and at least one edge case, and every declared outcome is exercised.
func TestEverySpecIsCovered(t *testing.T) {
	all := slices.Concat(valueCases, objectCases, collectionCases, recipeCases)
	for _, c := range Specs() {
		t.Run(c.Name, func(t *testing.T) {
			is := is.New(t)
			var ok, total int
			outcomes := map[string]bool{}
			for _, tc := range all {
				if tc.spec != c.Name {
					continue
				}
				total++
				if tc.wantErr == "" {
					ok++
					outcomes[tc.wantOutcome] = true
				}
			}
			is.True(total >= 2) // a happy path and an edge case
			if c.Name == RuntimeError {
				is.Equal(ok, 0)
				return
			}
			is.True(ok >= 1)
			for _, o := range c.Outcomes {
				is.True(outcomes[o]) // declared outcome is exercised
			}
		})
	}
}
