package records

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpflow/mcpflow/actors/store"
)

// WrapperSource is the source id of saved wrapper capabilities, whose
// names are CapabilityName's.
const WrapperSource = "workflow"

// Wrapper finds the saved wrapper a capability name denotes, if any: a
// name of another form, an unknown version or an artifact of kind
// workflow is no wrapper.
func Wrapper(ctx context.Context, st store.Store, name string) (store.Artifact, bool, error) {
	id, version, ok := parseCapabilityName(name)
	if !ok {
		return store.Artifact{}, false, nil
	}
	a, err := st.GetArtifact(ctx, id, version)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.Artifact{}, false, nil
	case err != nil:
		return store.Artifact{}, false, &StoreError{What: fmt.Sprintf("artifact %q version %d", id, version), Err: err}
	}
	return a, a.Kind == KindWrapper, nil
}

// parseCapabilityName splits "workflow.<artifact_id>.v<version>" at its
// last ".v".
func parseCapabilityName(name string) (id string, version int, ok bool) {
	rest, found := strings.CutPrefix(name, WrapperSource+".")
	i := strings.LastIndex(rest, ".v")
	if !found || i <= 0 {
		return "", 0, false
	}
	version, err := strconv.Atoi(rest[i+2:])
	if err != nil || version < 1 || !ValidID(rest[:i]) {
		return "", 0, false
	}
	return rest[:i], version, true
}
