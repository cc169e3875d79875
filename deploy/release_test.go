package deploy

import (
	"debug/elf"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestReleaseBinary checks a binary scripts/release built (MLDF_RELEASE_BINARY; scripts/test
// --full builds one and sets it): it needs no shared library beyond libc (the release is
// fully static: no interpreter, no DT_NEEDED at all), and with an empty environment, in a
// chroot holding only itself and the demo data when the test runs as root, it prints its
// version and converts the demo images (libjpeg-turbo) and the demo .h5ad files (HDF5)
// and verifies both outputs. The arm64 release on an amd64 machine:
//
//	MLDF_RELEASE_EMULATOR=qemu-aarch64-static MLDF_RELEASE_BINARY=dist/convert-VERSION-linux-arm64 \
//	  go test -run TestReleaseBinary ./deploy/
func TestReleaseBinary(t *testing.T) {
	bin := os.Getenv("MLDF_RELEASE_BINARY")
	if bin == "" {
		t.Skip("MLDF_RELEASE_BINARY is not set (scripts/test --full builds a release binary and sets it)")
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a program interpreter: it is dynamically linked", bin)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range libs {
		if !strings.HasPrefix(l, "libc.so.") {
			t.Errorf("%s needs %s: only libc (or nothing) is allowed", bin, l)
		}
	}
	f.Close()

	// The root: the binary, the two demo recipes and their data, an empty /tmp.
	root := t.TempDir()
	copyFile(t, bin, filepath.Join(root, "convert"), 0o755)
	for _, p := range []string{"configs/demo-images.yaml", "configs/h5ad-scdl.yaml"} {
		copyFile(t, filepath.Join("..", p), filepath.Join(root, p), 0o644)
	}
	copyTree(t, "../testdata/images", filepath.Join(root, "testdata/images"))
	copyTree(t, "../testdata/scdl", filepath.Join(root, "testdata/scdl"))
	for _, d := range []string{"tmp", "out"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	// MLDF_RELEASE_EMULATOR runs a binary of another architecture (qemu-aarch64-static for
	// the arm64 release on amd64); it is static too, so it goes into the chroot beside it.
	emu := os.Getenv("MLDF_RELEASE_EMULATOR")
	if emu != "" {
		p, err := exec.LookPath(emu)
		if err != nil {
			t.Fatal(err)
		}
		copyFile(t, p, filepath.Join(root, "emu"), 0o755)
	}
	chroot := os.Geteuid() == 0
	if !chroot {
		t.Log("not root: runs with an empty environment but not in a chroot")
	}
	run := func(args ...string) string {
		t.Helper()
		dir, prefix := root, root
		if chroot {
			dir, prefix = "/", ""
		}
		name := prefix + "/convert"
		if emu != "" {
			args = append([]string{name}, args...)
			name = prefix + "/emu"
		}
		cmd := exec.Command(filepath.Join(root, name[len(prefix):]), args...)
		if chroot {
			cmd = exec.Command(name, args...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
		}
		cmd.Dir = dir
		cmd.Env = []string{"TMPDIR=" + prefix + "/tmp", "OUT=" + prefix + "/out"} // nothing else: no LD_LIBRARY_PATH, no PATH
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("convert %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	prefix := root
	if chroot {
		prefix = ""
	}
	v := run("version")
	t.Logf("convert version:\n%s", v)
	for _, want := range []string{"convert ", "commit:", "built:", "jpeg:", "h5ad:", "storage:"} {
		if !strings.Contains(v, want) {
			t.Errorf("version lacks %q", want)
		}
	}
	if regexp.MustCompile(`(?m)^(commit|built): +unknown`).MatchString(v) {
		t.Errorf("a release build names its commit and date:\n%s", v)
	}
	cgo := strings.Contains(v, "libjpeg-turbo (cgo)")
	run("run", prefix+"/configs/demo-images.yaml")
	run("verify", prefix+"/out/demo.mldf")
	if cgo {
		if !strings.Contains(v, "h5ad:     libhdf5") {
			t.Errorf("a cgo release without HDF5:\n%s", v)
		}
		run("run", prefix+"/configs/h5ad-scdl.yaml")
		run("verify", prefix+"/out/pbmc.scdl")
	}
}

func copyFile(t *testing.T, src, dst string, mode fs.FileMode) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		copyFile(t, p, filepath.Join(dst, rel), 0o644)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The container image and the examples that use it: every convert container of the
// Kubernetes manifests runs ${IMAGE} (given once, like SHARDS) with no shell (the image is
// distroless), the Slurm script can run the image, and the Dockerfile's default VERSION is
// the tool's version.
func TestImageUse(t *testing.T) {
	for _, file := range []string{"k8s-indexed-job.yaml", "k8s-indexed-job-bucket.yaml"} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), "<registry>/convert:<tag>") {
			t.Errorf("%s: an image placeholder; use ${IMAGE}", file)
		}
		if !strings.Contains(string(raw), "envsubst '$SHARDS $IMAGE'") {
			t.Errorf("%s: the usage line does not substitute IMAGE", file)
		}
		dec := yaml.NewDecoder(strings.NewReader(string(raw)))
		n := 0
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if doc["kind"] != "Job" {
				continue
			}
			pod := doc["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			for _, key := range []string{"initContainers", "containers"} {
				cs, _ := pod[key].([]any)
				for _, c := range cs {
					c := c.(map[string]any)
					cmd, _ := c["command"].([]any)
					if len(cmd) == 0 || cmd[0] != "convert" {
						if c["image"] == "${IMAGE}" {
							t.Errorf("%s: container %v runs the convert image without convert (it has no shell)", file, c["name"])
						}
						continue
					}
					n++
					if c["image"] != "${IMAGE}" {
						t.Errorf("%s: container %v runs convert from image %v, want ${IMAGE}", file, c["name"], c["image"])
					}
				}
			}
		}
		if n < 2 {
			t.Errorf("%s: %d convert containers, want the shards and the merge", file, n)
		}
	}
	sb, _ := os.ReadFile("slurm-array.sbatch")
	if !strings.Contains(string(sb), `apptainer exec "docker://$IMAGE" convert`) {
		t.Errorf("slurm-array.sbatch cannot run the image")
	}
	main, err := os.ReadFile("../cmd/convert/main.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^const version = "([^"]+)"`).FindSubmatch(main)
	df, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if m == nil || !strings.Contains(string(df), "ARG VERSION="+string(m[1])+"\n") {
		t.Errorf("the Dockerfile's ARG VERSION is not the tool version %q", m)
	}
}
