package cli

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
)

// buildInfo is what the binary knows of its own build.
type buildInfo struct {
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
}

// readBuildInfo reads the module version, the VCS commit and the Go
// version from the build info.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: "(unknown)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if info.Main.Version != "" {
		b.Version = info.Main.Version
	}
	if info.GoVersion != "" {
		b.Go = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "vcs.time":
			b.CommitTime = s.Value
		}
	}
	return b
}

// String is the one line `mcpflow --version` prints after the name.
func (b buildInfo) String() string {
	s := b.Version
	if b.Commit != "" {
		commit := b.Commit
		if len(commit) > 12 {
			commit = commit[:12]
		}
		if b.Modified {
			commit += ", modified"
		}
		s += " (commit " + commit + ")"
	}
	return s + " " + b.Go + " " + b.Platform
}

func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "version",
		Example: "  mcpflow version -o json",
		Short:   "Show mcpflow's version, commit and Go version",
		Args:    cobra.NoArgs,
		GroupID: groupServer,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := readBuildInfo()
			w := cmd.OutOrStdout()
			if err := checkOutput(output); err != nil {
				return err
			}
			if output == outputJSON {
				return printJSON(w, b)
			}
			t := newTable(w)
			t.pairs("version", b.Version, "commit", b.Commit, "modified", b.Modified, "commit time", b.CommitTime, "go", b.Go, "platform", b.Platform)
			return t.flush()
		},
	}
	addOutputFlag(cmd.Flags(), &output)
	return cmd
}

// checkOutput refuses an -o other than table or json.
func checkOutput(output string) error {
	if output != outputTable && output != outputJSON {
		return fmt.Errorf("-o %q: want %s or %s", output, outputTable, outputJSON)
	}
	return nil
}

// checkOutputAndTimeout checks a command's -o and --timeout.
func checkOutputAndTimeout(output string, timeout time.Duration) error {
	if err := checkOutput(output); err != nil {
		return err
	}
	if timeout <= 0 {
		return errors.New("--timeout must be positive")
	}
	return nil
}
