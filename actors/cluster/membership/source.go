package membership

import (
	"context"
	"fmt"
	"slices"
)

// Source reads the cluster's live members: the nodes whose node lease is
// live, each with its addresses.
type Source interface {
	LiveMembers(ctx context.Context) ([]Member, error)
}

// Registered is the source of a cluster whose members register
// themselves: the registry's live members.
func Registered(r *Registry) Source { return registered{r} }

type registered struct{ registry *Registry }

func (s registered) LiveMembers(ctx context.Context) ([]Member, error) {
	live, err := s.registry.Live(ctx)
	if err != nil {
		return nil, err
	}
	members := make([]Member, len(live))
	for i, m := range live {
		members[i] = m.Member
	}
	return members, nil
}

// Static is the source of a cluster whose members are configured: those
// of members whose node lease is live, at their configured addresses,
// whether or not they registered.
func Static(r *Registry, members []Member) Source {
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.NodeID
	}
	return static{registry: r, members: slices.Clone(members), ids: ids}
}

type static struct {
	registry *Registry
	members  []Member
	ids      []string
}

func (s static) LiveMembers(ctx context.Context) ([]Member, error) {
	live, err := s.registry.LiveNodes(ctx, s.ids)
	if err != nil {
		return nil, fmt.Errorf("read the configured members: %w", err)
	}
	var members []Member
	for _, m := range s.members {
		if slices.Contains(live, m.NodeID) {
			members = append(members, m)
		}
	}
	return members, nil
}
