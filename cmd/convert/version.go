package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/mldf/convert/internal/hdf5"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/internal/turbojpeg"
	"github.com/mldf/convert/objstore"
)

// Set by scripts/release with -ldflags "-X main.buildCommit=... -X main.buildDate=...".
// Without them, `convert version` reads the commit and its time from the VCS stamp the go
// command embeds (go build in a git checkout; go install records the module version).
// They are never written at run time.
var (
	buildCommit string // the git commit the release was built from
	buildDate   string // RFC 3339 UTC time of the release build
)

// buildFacts is what `convert version` prints, gathered once from the binary.
type buildFacts struct {
	version  string // the tool version (the one reports record)
	module   string // the module version go install recorded ("" for a local build)
	commit   string // git commit, "+dirty" when the tree had changes
	date     string // build date (release builds) or commit time
	goVer    string // Go release and target
	cgo      bool
	tags     string // build tags
	jpeg     string // the JPEG codec
	h5ad     string // whether the h5ad source (libhdf5) is in
	storage  string // the cloud stores compiled in
	omitted  string // the cloud stores a build tag left out
	builtins string // what every build has
}

func gatherBuildFacts() buildFacts {
	f := buildFacts{version: version, commit: buildCommit, date: buildDate,
		goVer: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" && !strings.Contains(v, "+dirty") {
			f.module = v
		}
		var rev, vtime string
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				vtime = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			case "CGO_ENABLED":
				f.cgo = s.Value == "1"
			case "-tags":
				f.tags = s.Value
			}
		}
		if f.commit == "" && rev != "" {
			f.commit = rev
			if dirty {
				f.commit += "+dirty"
			}
		}
		if f.date == "" && vtime != "" {
			f.date = vtime + " (commit time)"
		}
	}
	if f.commit == "" {
		f.commit = "unknown"
	}
	if f.date == "" {
		f.date = "unknown"
	}
	if turbojpeg.Available() {
		f.jpeg = "libjpeg-turbo (cgo): fast decode and encode, decoding at 1/2, 1/4, 1/8 scale"
	} else {
		f.jpeg = "pure Go (image/jpeg): a build without cgo; JPEG decoding and encoding are several times slower"
	}
	if hdf5.Available() {
		f.h5ad = "libhdf5 (cgo): the h5ad source is available"
	} else {
		f.h5ad = "not in this build (libhdf5 needs cgo): the h5ad source is unavailable"
	}
	var in, out []string
	for _, b := range objstore.Backends() {
		name := b.Scheme
		if name == objstore.SchemeAzure {
			name = "az"
		}
		if b.Built {
			in = append(in, name+"://")
		} else {
			out = append(out, name+":// (-tags "+b.Tag+")")
		}
	}
	f.storage = strings.Join(append([]string{"local files"}, in...), ", ")
	f.omitted = strings.Join(out, ", ")
	f.builtins = "PNG, WebP, TIFF, BMP, GIF; WAV, FLAC; Parquet; gzip, zstd, brotli, lz4 (pure Go)"
	return f
}

// write prints the facts, one "key: value" line each.
func (f buildFacts) write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "convert %s\n", f.version)
	if f.module != "" {
		fmt.Fprintf(&b, "module:   %s\n", f.module)
	}
	fmt.Fprintf(&b, "commit:   %s\n", f.commit)
	fmt.Fprintf(&b, "built:    %s\n", f.date)
	cgo := "cgo"
	if !f.cgo {
		cgo = "no cgo (pure Go)"
	}
	fmt.Fprintf(&b, "go:       %s, %s", f.goVer, cgo)
	if f.tags != "" {
		fmt.Fprintf(&b, ", tags %s", f.tags)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "jpeg:     %s\n", f.jpeg)
	fmt.Fprintf(&b, "h5ad:     %s\n", f.h5ad)
	fmt.Fprintf(&b, "storage:  %s\n", f.storage)
	if f.omitted != "" {
		fmt.Fprintf(&b, "omitted:  %s\n", f.omitted)
	}
	fmt.Fprintf(&b, "always:   %s\n", f.builtins)
	_, err := io.WriteString(w, b.String())
	return err
}

// cmdVersion prints the version, the commit and date of the build, and which codecs and
// stores it has: `convert version` (also `convert --version`).
func cmdVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return fmt.Errorf("%w: convert version takes no arguments (got %s)", errUsage, quote.Q(pos[0]))
	}
	return gatherBuildFacts().write(stdout)
}
