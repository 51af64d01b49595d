package sources

import (
	"encoding/json"
	"fmt"
	"sort"
)

// indexByKey indexes items by key, as their JSON (so a changed schema or
// description shows as changed).
func indexByKey[T any](items []T, key func(T) string) map[string]string {
	out := make(map[string]string, len(items))
	for _, it := range items {
		data, err := json.Marshal(it)
		if err != nil {
			data = []byte(fmt.Sprintf("%#v", it))
		}
		out[key(it)] = string(data)
	}
	return out
}

// diffNamed compares two indexes: the names only in after, only in
// before, and in both with different content, each sorted.
func diffNamed(before, after map[string]string) (added, removed, changed []string) {
	added, removed, changed = []string{}, []string{}, []string{}
	for name, v := range after {
		old, ok := before[name]
		switch {
		case !ok:
			added = append(added, name)
		case old != v:
			changed = append(changed, name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			removed = append(removed, name)
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	sort.Strings(changed)
	return added, removed, changed
}

func withPrefix(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}
