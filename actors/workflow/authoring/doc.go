// Package authoring owns the editing of draft workflow documents. Each
// operation takes a document, its params and a capability lookup, and
// answers the next document or refuses the edit with an *Error that says
// why (malformed params, a value that does not fit, a step or capability
// that is not there). The language rules of authoring live here: the
// outcomes a step may be routed on (and that add_step_from_capability
// covers exactly a capability's outcomes), the checks of bindings against
// a capability's schemas and the projection of those schemas into the
// workflow's own (bind and the binding setters), the reference's legacy
// binding maps and their merge, the JSON Patch of a whole draft, the
// check and compile of a document against the capabilities the lookup
// knows, the strict decode of a raw plan, the graph facts of a draft
// (Summarize), and which edit takes a draft further after an edit
// (Advise: the remedy of its first error, which the API names as its
// method).
//
// An operation never changes the document it is given and stores
// nothing: revisions, their compare-and-set and the projection of results
// belong to the caller (api/service).
package authoring
