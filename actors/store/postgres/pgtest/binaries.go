package pgtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// installRoots are the folders that hold one bin folder per installed
// PostgreSQL version: Debian's and Ubuntu's packages install there.
var installRoots = []string{"/usr/lib/postgresql"}

// findBinDir returns the folder that holds initdb and postgres: the one of
// initdb on PATH, else the newest version under installRoots; "" if there
// is none.
func findBinDir() string {
	if initdb, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(initdb)
	}
	var dirs []string
	for _, root := range installRoots {
		matches, _ := filepath.Glob(filepath.Join(root, "*", "bin", "initdb"))
		for _, m := range matches {
			dirs = append(dirs, filepath.Dir(m))
		}
	}
	if len(dirs) == 0 {
		return ""
	}
	// The version is the folder above bin: 15, 16, 9.6.
	slices.SortFunc(dirs, func(a, b string) int { return slices.Compare(versionOf(a), versionOf(b)) })
	dir := dirs[len(dirs)-1]
	if _, err := os.Stat(filepath.Join(dir, "postgres")); err != nil {
		return ""
	}
	return dir
}

// versionOf is the numeric parts of the version folder above bin.
func versionOf(binDir string) []int {
	var parts []int
	for _, p := range strings.Split(filepath.Base(filepath.Dir(binDir)), ".") {
		n, _ := strconv.Atoi(p)
		parts = append(parts, n)
	}
	return parts
}

// tool is the path of the PostgreSQL client program name (pg_dump) of the
// server binaries in binDir: beside initdb there, or beside the file
// initdb links to (a PATH folder may hold links to some programs only).
func tool(binDir, name string) string {
	path := filepath.Join(binDir, name)
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if initdb, err := filepath.EvalSymlinks(filepath.Join(binDir, "initdb")); err == nil {
		return filepath.Join(filepath.Dir(initdb), name)
	}
	return path
}
