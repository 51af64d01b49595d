package std

import (
	"sort"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestReducersListsEveryReducerSortedByName(t *testing.T) {
	is := is.New(t)
	var names []string
	for _, r := range Reducers() {
		names = append(names, r.Name)
		is.True(r.Description != "")
		is.True(r.Apply != nil)
		is.Equal(r.Mergeable, r.Name != Replace) // only replace is exclusive
		s := resolve(t, r.ConfigSchema)
		is.NoErr(s.Validate(map[string]any{}))
		is.True(s.Validate(map[string]any{"x": 1.0}) != nil) // takes no config
		found, ok := LookupReducer(r.Name)
		is.True(ok)
		is.Equal(found.Name, r.Name)
	}
	is.Equal(names, []string{Add, Append, Max, MergeObject, Replace, SetUnion})
	is.True(sort.StringsAreSorted(names))

	_, ok := LookupReducer("wf.std.constant")
	is.True(!ok)
}

func TestLookupReducerReturnsIndependentCopies(t *testing.T) {
	is := is.New(t)
	r, _ := LookupReducer(Append)
	r.ConfigSchema["type"] = "broken"
	again, _ := LookupReducer(Append)
	is.Equal(again.ConfigSchema["type"], "object")
}

func TestReducerApply(t *testing.T) {
	cases := []struct {
		reducer  string
		name     string
		current  any
		present  bool
		incoming any
		config   Object
		want     any
		wantErr  string
	}{
		{reducer: Replace, name: "absent", incoming: "x", want: "x"},
		{reducer: Replace, name: "present", current: []any{1.0}, present: true, incoming: Object{"a": 1.0}, want: Object{"a": 1.0}},
		{reducer: Replace, name: "with null", current: "x", present: true, incoming: nil, want: nil},
		{reducer: Replace, name: "config rejected", incoming: 1.0, config: Object{"bad": true}, wantErr: `wf.std.replace takes no config, got ["bad"]`},

		{reducer: Append, name: "absent list", incoming: []any{"a", "b"}, want: []any{"a", "b"}},
		{reducer: Append, name: "absent scalar", incoming: "a", want: []any{"a"}},
		{reducer: Append, name: "null current", current: nil, present: true, incoming: "a", want: []any{"a"}},
		{reducer: Append, name: "list extends", current: []any{"seed"}, present: true, incoming: []any{"a", "b"}, want: []any{"seed", "a", "b"}},
		{reducer: Append, name: "scalar appends", current: []any{"seed"}, present: true, incoming: Object{"k": 1.0}, want: []any{"seed", Object{"k": 1.0}}},
		{reducer: Append, name: "null appends", current: []any{}, present: true, incoming: nil, want: []any{nil}},
		{reducer: Append, name: "current not a list", current: "seed", present: true, incoming: "a", wantErr: "wf.std.append: current value: expected array, got string"},

		{reducer: MergeObject, name: "absent", incoming: Object{"a": 1.0}, want: Object{"a": 1.0}},
		{reducer: MergeObject, name: "incoming wins", current: Object{"a": 1.0, "b": Object{"x": 1.0}}, present: true, incoming: Object{"b": Object{"y": 2.0}, "c": 3.0}, want: Object{"a": 1.0, "b": Object{"y": 2.0}, "c": 3.0}},
		{reducer: MergeObject, name: "incoming not an object", current: Object{}, present: true, incoming: []any{}, wantErr: "wf.std.merge_object: incoming value: expected object, got array"},
		{reducer: MergeObject, name: "absent and not an object", incoming: "x", wantErr: "incoming value: expected object, got string"},
		{reducer: MergeObject, name: "current not an object", current: 1.0, present: true, incoming: Object{}, wantErr: "current value: expected object, got number"},

		{reducer: Add, name: "absent", incoming: 5.0, want: 5.0},
		{reducer: Add, name: "sum", current: 7.0, present: true, incoming: 5.0, want: 12.0},
		{reducer: Add, name: "negative and fractional", current: 1.5, present: true, incoming: -2.0, want: -0.5},
		{reducer: Add, name: "go ints become float64", current: 2, present: true, incoming: int64(3), want: 5.0},
		{reducer: Add, name: "incoming not a number", current: 1.0, present: true, incoming: "2", wantErr: "wf.std.add: incoming value: expected number, got string"},
		{reducer: Add, name: "boolean is not a number", incoming: true, wantErr: "incoming value: expected number, got boolean"},
		{reducer: Add, name: "current not a number", current: []any{}, present: true, incoming: 1.0, wantErr: "current value: expected number, got array"},

		{reducer: SetUnion, name: "absent", incoming: []any{"a", "a", "b"}, want: []any{"a", "b"}},
		{reducer: SetUnion, name: "first-seen order", current: []any{"alpha", "beta"}, present: true, incoming: []any{"beta", "gamma"}, want: []any{"alpha", "beta", "gamma"}},
		{reducer: SetUnion, name: "deep equality", current: []any{Object{"a": 1.0, "b": []any{2.0}}}, present: true, incoming: []any{Object{"b": []any{2.0}, "a": 1.0}, 1.0, 1}, want: []any{Object{"a": 1.0, "b": []any{2.0}}, 1.0}},
		{reducer: SetUnion, name: "incoming not a list", current: []any{}, present: true, incoming: "a", wantErr: "wf.std.set_union: incoming value: expected array, got string"},
		{reducer: SetUnion, name: "current not a list", current: Object{}, present: true, incoming: []any{}, wantErr: "current value: expected array, got object"},

		{reducer: Max, name: "absent", incoming: 3.0, want: 3.0},
		{reducer: Max, name: "larger incoming", current: 7.0, present: true, incoming: 9.0, want: 9.0},
		{reducer: Max, name: "smaller incoming", current: 7.0, present: true, incoming: -1.0, want: 7.0},
		{reducer: Max, name: "strings", current: "apple", present: true, incoming: "banana", want: "banana"},
		{reducer: Max, name: "absent string", incoming: "a", want: "a"},
		{reducer: Max, name: "mixed types", current: 1.0, present: true, incoming: "2", wantErr: "wf.std.max: incoming value: expected number like the current value, got string"},
		{reducer: Max, name: "absent and not comparable", incoming: []any{}, wantErr: "incoming value: expected number or string, got array"},
		{reducer: Max, name: "current not comparable", current: true, present: true, incoming: true, wantErr: "current value: expected number or string, got boolean"},
	}
	for _, tc := range cases {
		t.Run(tc.reducer+"/"+tc.name, func(t *testing.T) {
			is := is.New(t)
			r, ok := LookupReducer(tc.reducer)
			is.True(ok)
			got, err := r.Apply(tc.current, tc.present, tc.incoming, tc.config)
			if tc.wantErr != "" {
				is.True(err != nil)
				is.True(strings.Contains(err.Error(), tc.wantErr))
				return
			}
			is.NoErr(err)
			is.Equal(got, tc.want)
		})
	}
}

// Absent means absent: a value passed with present=false is ignored.
func TestReducerIgnoresCurrentWhenNotPresent(t *testing.T) {
	is := is.New(t)
	for _, r := range Reducers() {
		incoming := map[string]any{Append: []any{1.0}, SetUnion: []any{1.0}, MergeObject: Object{"a": 1.0}, Add: 1.0, Max: 1.0, Replace: 1.0}[r.Name]
		got, err := r.Apply("garbage", false, incoming, nil)
		is.NoErr(err)
		is.Equal(got, incoming)
	}
}

func TestReducersDoNotMutateOrAliasCurrent(t *testing.T) {
	is := is.New(t)
	backing := make([]any, 1, 8)
	backing[0] = "seed"
	appendR, _ := LookupReducer(Append)
	a, err := appendR.Apply(backing, true, "a", nil)
	is.NoErr(err)
	b, err := appendR.Apply(backing, true, "b", nil)
	is.NoErr(err)
	is.Equal(a, []any{"seed", "a"}) // a sibling write did not overwrite it
	is.Equal(b, []any{"seed", "b"})

	current := Object{"a": 1.0}
	merge, _ := LookupReducer(MergeObject)
	_, err = merge.Apply(current, true, Object{"b": 2.0}, nil)
	is.NoErr(err)
	is.Equal(current, Object{"a": 1.0})
}

// Mergeable reducers fold concurrent sibling writes one after another.
func TestMergeableReducersFoldSiblingWrites(t *testing.T) {
	is := is.New(t)
	fold := func(name string, start any, present bool, writes ...any) any {
		r, _ := LookupReducer(name)
		value := start
		for _, w := range writes {
			next, err := r.Apply(value, present, w, nil)
			is.NoErr(err)
			value, present = next, true
		}
		return value
	}
	is.Equal(fold(Add, 2.0, true, 1.0, 2.0, 3.0), 8.0)
	is.Equal(fold(Max, nil, false, 4.0, 9.0, 1.0), 9.0)
	is.Equal(fold(Append, nil, false, "a", []any{"b", "c"}), []any{"a", "b", "c"})
	is.Equal(fold(SetUnion, nil, false, []any{"a"}, []any{"a", "b"}), []any{"a", "b"})
	is.Equal(fold(MergeObject, nil, false, Object{"a": 1.0}, Object{"b": 2.0}), Object{"a": 1.0, "b": 2.0})
}
