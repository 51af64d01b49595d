package cli

import (
	"fmt"
	"io"
	"strings"
)

// maxDiffCells bounds the table a line diff builds (lines of a times lines
// of b); larger documents are only said to differ.
const maxDiffCells = 4 << 20

// diffContext is how many unchanged lines a diff shows around a change.
const diffContext = 2

// writeLineDiff writes the lines that turn a into b: "-" for a line only
// a has, "+" for one only b has, with diffContext unchanged lines around
// each change and "…" where unchanged lines are left out.
func writeLineDiff(w io.Writer, aName, bName, a, b string) {
	al, bl := splitLines(a), splitLines(b)
	fmt.Fprintf(w, "--- %s\n+++ %s\n", aName, bName)
	if len(al)*len(bl) > maxDiffCells {
		fmt.Fprintf(w, "(the documents differ: %d and %d lines, too many to compare line by line)\n", len(al), len(bl))
		return
	}
	ops := diffLines(al, bl)
	// Show each op within diffContext of a change.
	show := make([]bool, len(ops))
	for i, op := range ops {
		if op.kind == ' ' {
			continue
		}
		for j := max(0, i-diffContext); j <= min(len(ops)-1, i+diffContext); j++ {
			show[j] = true
		}
	}
	skipped := false
	for i, op := range ops {
		if !show[i] {
			skipped = true
			continue
		}
		if skipped {
			fmt.Fprintln(w, "…")
			skipped = false
		}
		fmt.Fprintf(w, "%c %s\n", op.kind, op.line)
	}
	if skipped {
		fmt.Fprintln(w, "…")
	}
}

// lineOp is one line of a diff: kind ' ' (in both), '-' or '+'.
type lineOp struct {
	kind byte
	line string
}

// diffLines is a shortest edit from a to b by their longest common
// subsequence.
func diffLines(a, b []string) []lineOp {
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []lineOp
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			ops = append(ops, lineOp{' ', a[i]})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			ops = append(ops, lineOp{'-', a[i]})
			i++
		default:
			ops = append(ops, lineOp{'+', b[j]})
			j++
		}
	}
	for ; i < len(a); i++ {
		ops = append(ops, lineOp{'-', a[i]})
	}
	for ; j < len(b); j++ {
		ops = append(ops, lineOp{'+', b[j]})
	}
	return ops
}

// splitLines are s's lines, without a final empty one.
func splitLines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
