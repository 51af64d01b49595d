package records

import "regexp"

// idPattern is what the id of a record (a workspace, an artifact, a
// deployment) matches.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// ValidID reports whether id may name a record.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// CheckID refuses, as malformed, an id no record may have; kind names
// the id for the client ("artifact_id", "deployment id").
func CheckID(kind, id string) error {
	if !ValidID(id) {
		return malformed("%s %q must match %s", kind, id, idPattern)
	}
	return nil
}
