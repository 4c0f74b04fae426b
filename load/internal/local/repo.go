package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// FindRepo locates the bookinfo-bench checkout whose apps/ are started:
// $BOOKINFO_ROOT, else the first parent of the working directory, else of
// the executable, that holds apps/productpage/serve.
func FindRepo() (string, error) {
	if root := os.Getenv("BOOKINFO_ROOT"); root != "" {
		if !isRepo(root) {
			return "", fmt.Errorf("BOOKINFO_ROOT=%s has no apps/productpage/serve", root)
		}
		return filepath.Abs(root)
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		for d := dir; ; d = filepath.Dir(d) {
			if isRepo(d) {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", errors.New("cannot find the bookinfo-bench checkout (a folder with apps/productpage/serve): run bookload inside it or set BOOKINFO_ROOT")
}

func isRepo(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "apps", "productpage", "serve"))
	return err == nil
}

// StateDir is where stacks keep pid files and logs:
// $BOOKLOAD_STATE_DIR, else $XDG_STATE_HOME/bookinfo-bench, else
// <repo>/.bookinfo.
func StateDir(repo string) string {
	if d := os.Getenv("BOOKLOAD_STATE_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "bookinfo-bench")
	}
	return filepath.Join(repo, ".bookinfo")
}
