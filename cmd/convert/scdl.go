package main

import (
	"os"

	_ "github.com/mldf/convert/format/scdl" // registers the format
)

// localDir returns the local path arg names and true when it is a directory. The read
// commands read every other kind from a file, so a directory is an SCDL archive or nothing
// they know, and scdl.Open says which files it lacks.
func localDir(arg string) (string, bool) {
	path, local, err := localPath(arg)
	if err != nil || !local {
		return "", false
	}
	fi, err := os.Stat(path)
	return path, err == nil && fi.IsDir()
}
