// Package std is the platform library of the workflow language: the node
// specs of the built-in "wf.std" source (value, object and list helpers and
// wf.std.runtime_error), the composed "wf.recipes" specs such as
// wf.recipes.extract_text_content, and the "wf.std" state reducers.
//
// Everything here is pure: a spec body and a reducer are functions of their
// arguments only. They do no I/O, keep no state, start no actors and never
// mutate what they are given; results may share unchanged sub-values with
// the input. Values are JSON values as decoded by encoding/json into any
// (numbers as float64); numbers in results are float64.
//
// The registry is fixed at package initialisation. Lookup, Specs,
// LookupReducer and Reducers hand out copies of the declared schemas, so
// callers may modify what they receive.
package std
