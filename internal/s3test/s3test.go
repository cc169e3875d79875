// Package s3test starts a real S3 server for tests: versitygw over a temporary directory,
// on 127.0.0.1 with a free port. Tests skip, saying why, only where versitygw can be
// neither found nor built.
//
// scripts/deps test installs versitygw into GOBIN (or GOPATH/bin); when it is missing, the
// first test that needs it builds it with `go install` (about two minutes, once).
package s3test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Module and Version name the versitygw build the tests run against.
const (
	Module  = "github.com/versity/versitygw/cmd/versitygw"
	Version = "v1.8.0"
)

// Credentials of the server's root user.
const (
	AccessKey = "objstore-test-key"
	SecretKey = "objstore-test-secret"
)

// Server is a running versitygw.
type Server struct {
	Endpoint string // http://127.0.0.1:PORT
	Dir      string // the backend: each top-level folder is a bucket, each file an object
	cmd      *exec.Cmd
	log      string     // its output
	exited   chan error // receives cmd.Wait's result
}

var build struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of versitygw, building it once when it is not installed.
func Binary() (string, error) {
	build.once.Do(func() {
		if p, err := exec.LookPath("versitygw"); err == nil {
			build.path = p
			return
		}
		bin := gobin()
		p := filepath.Join(bin, "versitygw")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			build.path = p
			return
		}
		if os.Getenv("S3TEST_NO_BUILD") != "" {
			build.err = fmt.Errorf("versitygw not found in PATH or %s, and S3TEST_NO_BUILD is set", bin)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "install", Module+"@"+Version)
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("versitygw not installed and `go install %s@%s` failed: %v\n%s", Module, Version, err, out)
			return
		}
		build.path = p
	})
	return build.path, build.err
}

func gobin() string {
	if out, err := exec.Command("go", "env", "GOBIN").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		return strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		if p := strings.TrimSpace(string(out)); p != "" {
			return filepath.Join(strings.Split(p, string(os.PathListSeparator))[0], "bin")
		}
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, "go", "bin")
}

// Start runs versitygw on a free port over a new temporary directory, stopped when the test
// ends. It skips the test when versitygw cannot be found, built or started.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Skipf("no S3 server for this test: %v (run scripts/deps test)", err)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	var last error
	for try := range 5 {
		s, err := start(bin, data, filepath.Join(dir, fmt.Sprintf("versitygw-%d.log", try)))
		if err == nil {
			t.Cleanup(s.Stop)
			return s
		}
		last = err
	}
	t.Skipf("versitygw does not start here: %v", last)
	return nil
}

func start(bin, dir, logPath string) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close() // the child has its own descriptor
	s := &Server{Endpoint: "http://" + addr, Dir: dir, log: logPath, exited: make(chan error, 1)}
	s.cmd = exec.Command(bin, "--port", addr, "--keep-alive", "--quiet", "posix", dir)
	s.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+AccessKey, "ROOT_SECRET_KEY="+SecretKey)
	s.cmd.Stdout, s.cmd.Stderr = log, log // files: no copying goroutines
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.exited <- s.cmd.Wait() }() // ends when the process does (Stop kills it)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.exited:
			return nil, fmt.Errorf("versitygw exited: %v: %s", err, s.Log())
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return s, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.Stop()
	return nil, fmt.Errorf("versitygw did not listen on %s within 20s: %s", addr, s.Log())
}

// Stop kills the server and waits for it. Calling it twice is harmless.
func (s *Server) Stop() {
	if s.cmd.Process == nil || s.exited == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.exited
	s.exited = nil
}

// Log returns what the server printed.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

// MakeBucket creates a bucket (a top-level folder of the backend).
func (s *Server) MakeBucket(t testing.TB, name string) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(s.Dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Env points the AWS standard chain at endpoint (the server's, or a proxy's in front of
// it) with the given secret, for the rest of the test, and shuts out the machine's own
// AWS configuration (files, profile, instance role).
func Env(t testing.TB, endpoint, secret string) {
	t.Helper()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID":           AccessKey,
		"AWS_SECRET_ACCESS_KEY":       secret,
		"AWS_SESSION_TOKEN":           "",
		"AWS_ENDPOINT_URL_S3":         endpoint,
		"AWS_ENDPOINT_URL":            "",
		"AWS_REGION":                  "us-east-1",
		"AWS_DEFAULT_REGION":          "",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             filepath.Join(os.DevNull, "none"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(os.DevNull, "none"),
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_S3_ADDRESSING_STYLE":     "",
	} {
		t.Setenv(k, v)
	}
}
