// Package suggest finds, for a name that is not one of the known names,
// the nearest known one: the "did you mean" of errors and diagnostics
// (an unknown deployment, capability or config field, a mistyped path).
package suggest

import (
	"fmt"
	"strings"
)

// Nearest is the candidate nearest to name, and whether one is near
// enough to suggest: a candidate equal but for case; else the shortest
// one that extends name past a separator ("visit" → "visit.default");
// else the only one that starts with name; else the one fewest edits away (insertions, deletions, substitutions
// and swaps of adjacent letters), if at most a third of name's length
// (at least 1, at most 3). Ties go to the earliest candidate.
func Nearest(name string, candidates []string) (string, bool) {
	if name == "" {
		return "", false
	}
	for _, c := range candidates {
		if c != name && strings.EqualFold(c, name) {
			return c, true
		}
	}
	best := ""
	for _, c := range candidates {
		if extends(c, name) && (best == "" || len(c) < len(best)) {
			best = c
		}
	}
	if best != "" {
		return best, true
	}
	if only, ok := onlyPrefixed(name, candidates); ok {
		return only, true
	}
	limit := min(max(1, len([]rune(name))/3), 3)
	bestDist := limit + 1
	for _, c := range candidates {
		if c == name {
			continue
		}
		if d := distance(strings.ToLower(name), strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best, best != ""
}

// DidYouMean is `; did you mean "X"?` for the nearest candidate, or ""
// when none is near enough.
func DidYouMean(name string, candidates []string) string {
	if c, ok := Nearest(name, candidates); ok {
		return fmt.Sprintf("; did you mean %q?", c)
	}
	return ""
}

// extends reports whether c is name followed by a separator and more.
func extends(c, name string) bool {
	rest, ok := strings.CutPrefix(c, name)
	return ok && len(rest) > 1 && strings.ContainsRune("._-/:", rune(rest[0]))
}

// onlyPrefixed is the one candidate that starts with name (of 4
// characters at least: a run id cut short, "run_98dd"), if only one does.
func onlyPrefixed(name string, candidates []string) (string, bool) {
	if len(name) < 4 {
		return "", false
	}
	found := ""
	for _, c := range candidates {
		if c != name && strings.HasPrefix(c, name) {
			if found != "" {
				return "", false
			}
			found = c
		}
	}
	return found, found != ""
}

// distance is the optimal string alignment distance between a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
