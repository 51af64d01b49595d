package authoring

import (
	"maps"
	"slices"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// inputMap parses a map of graph source path -> node-local target (the
// step input and workflow output maps) into path bindings sorted by source.
func inputMap(name string, m map[string]string) ([]workflow.InputBinding, error) {
	if m == nil {
		return nil, malformed("%s must be an object", name)
	}
	out := make([]workflow.InputBinding, 0, len(m))
	for _, source := range slices.Sorted(maps.Keys(m)) {
		b := workflow.PathBinding(m[source], source)
		if err := b.Path.Err(); err != nil {
			return nil, malformed("%s key %q: %v", name, source, err)
		}
		if err := b.Target.Err(); err != nil {
			return nil, malformed("%s[%q]: %v", name, source, err)
		}
		out = append(out, b)
	}
	return out, nil
}

// outputMap parses a map of node-local source -> state path into output
// bindings sorted by source.
func outputMap(name string, m map[string]string) ([]workflow.OutputBinding, error) {
	if m == nil {
		return nil, malformed("%s must be an object", name)
	}
	out := make([]workflow.OutputBinding, 0, len(m))
	for _, source := range slices.Sorted(maps.Keys(m)) {
		b := workflow.OutputTo(source, m[source])
		if err := b.Source.Err(); err != nil {
			return nil, malformed("%s key %q: %v", name, source, err)
		}
		if err := b.Target.Err(); err != nil {
			return nil, malformed("%s[%q]: %v", name, source, err)
		}
		out = append(out, b)
	}
	return out, nil
}

// setStepMap stores one side of use step id's bindings, under key, from
// a legacy map: the bindings given, or (with merge) those merge makes of
// the stored step's; the legacy maps the list replaces go.
func setStepMap[B any](doc workflow.Object, id string, given []B, merge bool, merged func(workflow.DraftStep) ([]B, error), key string, legacy ...string) error {
	step, _, err := useStepOf(doc, id)
	if err != nil {
		return err
	}
	list := given
	if merge {
		parsed, err := parsedStep(id, step)
		if err != nil {
			return err
		}
		if list, err = merged(parsed); err != nil {
			return err
		}
	}
	return replaceList(step, key, list, legacy...)
}

// parsedStep decodes one stored step as the draft parser does, so that
// legacy in/with/out maps read as bindings too.
func parsedStep(id string, step workflow.Object) (workflow.DraftStep, error) {
	parsed, err := parseStep(id, step)
	if err != nil {
		return workflow.DraftStep{}, invalid("step %q cannot be read as bindings (%v); %s", id, err, MapHint)
	}
	return parsed, nil
}

// mergeInputs merges path bindings given as a map into a stored list: a
// stored binding whose source is in the map gets the map's target, in
// place, and the rest of the map is appended; the other stored bindings,
// literals included, stay as they are. A stored expression cannot be
// represented by the reference's maps, and a source the map names that is
// bound more than once cannot be retargeted unambiguously: both refuse the
// merge.
func mergeInputs(stored, given []workflow.InputBinding, what string) ([]workflow.InputBinding, error) {
	targetOf := map[string]workflow.LocalPath{}
	for _, b := range given {
		targetOf[b.Path.String()] = b.Target
	}
	count := map[string]int{}
	for _, b := range stored {
		switch {
		case b.Expression != nil:
			return nil, invalid("%s have an expression binding (target %s), which a map cannot represent; %s", what, b.Target, MapHint)
		case b.Path != nil:
			source := b.Path.String()
			if count[source]++; count[source] > 1 {
				if _, named := targetOf[source]; named {
					return nil, invalid("%s bind source %s more than once, so a map cannot retarget it; %s", what, source, MapHint)
				}
			}
		}
	}
	out := make([]workflow.InputBinding, 0, len(stored)+len(given))
	for _, b := range stored {
		if b.Path != nil {
			if t, ok := targetOf[b.Path.String()]; ok {
				b.Target = t
			}
		}
		out = append(out, b)
	}
	for _, b := range given {
		if count[b.Path.String()] == 0 {
			out = append(out, b)
		}
	}
	return out, nil
}

// mergeOutputs merges output bindings given as a map into a stored list,
// as mergeInputs does: a source the map names that is read more than once
// cannot be retargeted unambiguously.
func mergeOutputs(stored, given []workflow.OutputBinding, what string) ([]workflow.OutputBinding, error) {
	targetOf := map[string]workflow.StatePath{}
	for _, b := range given {
		targetOf[b.Source.String()] = b.Target
	}
	count := map[string]int{}
	out := make([]workflow.OutputBinding, 0, len(stored)+len(given))
	for _, b := range stored {
		source := b.Source.String()
		if count[source]++; count[source] > 1 {
			if _, named := targetOf[source]; named {
				return nil, invalid("%s read source %s more than once, so a map cannot retarget it; %s", what, source, MapHint)
			}
		}
		if t, ok := targetOf[source]; ok {
			b.Target = t
		}
		out = append(out, b)
	}
	for _, b := range given {
		if count[b.Source.String()] == 0 {
			out = append(out, b)
		}
	}
	return out, nil
}
