package workflow

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestDiagnosticCodesMatchTheLanguageDocs checks that the codes explained
// are the codes docs/language.md's validation table lists, each with a
// meaning and a repair.
func TestDiagnosticCodesMatchTheLanguageDocs(t *testing.T) {
	is := is.New(t)
	doc, err := os.ReadFile("../../docs/language.md")
	is.NoErr(err)
	_, table, ok := strings.Cut(string(doc), "## 10. Validation")
	is.True(ok) // the validation section is there
	var documented []string
	code := regexp.MustCompile("`([a-z_]+)`")
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		for _, m := range code.FindAllStringSubmatch(first, -1) {
			documented = append(documented, m[1])
		}
	}
	var explained []string
	for _, c := range DiagnosticCodes {
		is.True(c.Means != "" && c.Repair != "")                        // each says what it means and how to repair it
		is.True(c.Severity == "error" || c.Severity == SeverityWarning) // and how bad it is
		explained = append(explained, c.Code)
	}
	slices.Sort(documented)
	slices.Sort(explained)
	is.Equal(explained, documented) // the table and the docs list the same codes
}
