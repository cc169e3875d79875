// Package aztest starts Azurite, Microsoft's Azure Storage emulator (npm package azurite),
// for tests: its blob service on 127.0.0.1 with a free port over a temporary directory.
// Tests skip, saying why, where azurite-blob is not installed (npm install -g azurite).
package aztest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// Azurite's well-known development account.
const (
	Account = "devstoreaccount1"
	Key     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Server is a running Azurite blob service.
type Server struct {
	Host   string // 127.0.0.1:PORT
	cmd    *exec.Cmd
	exited chan error
}

// Start runs azurite-blob, stopped when the test ends; it skips the test when Azurite is
// not installed or does not start.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("azurite-blob")
	if err != nil {
		t.Skip("Azurite not installed (npm install -g azurite): Azure tests skipped")
	}
	dir := t.TempDir()
	var last error
	for range 3 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		host := l.Addr().String()
		l.Close()
		_, port, _ := net.SplitHostPort(host)
		log, err := os.Create(filepath.Join(dir, "azurite.log"))
		if err != nil {
			t.Fatal(err)
		}
		s := &Server{Host: host, exited: make(chan error, 1)}
		s.cmd = exec.Command(bin, "--blobHost", "127.0.0.1", "--blobPort", port, "--location", dir,
			"--silent", "--skipApiVersionCheck", "--disableTelemetry", "--loose")
		s.cmd.Stdout, s.cmd.Stderr = log, log
		err = s.cmd.Start()
		log.Close()
		if err != nil {
			last = err
			continue
		}
		go func() { s.exited <- s.cmd.Wait() }() // ends when the process does (Stop kills it)
		if err := s.wait(); err != nil {
			s.Stop()
			b, _ := os.ReadFile(filepath.Join(dir, "azurite.log"))
			last = fmt.Errorf("%v: %s", err, b)
			continue
		}
		t.Cleanup(s.Stop)
		return s
	}
	t.Skipf("Azurite does not start here: %v", last)
	return nil
}

func (s *Server) wait() error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.exited:
			s.exited <- err
			return fmt.Errorf("azurite exited: %v", err)
		default:
		}
		if c, err := net.DialTimeout("tcp", s.Host, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("azurite did not listen on %s within 30s", s.Host)
}

// Stop kills the emulator and waits for it.
func (s *Server) Stop() {
	if s.exited == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.exited
	s.exited = nil
}

// Env points the standard Azure settings at the emulator for the rest of the test.
func (s *Server) Env(t testing.TB) {
	t.Helper()
	for k, v := range map[string]string{
		"AZURE_STORAGE_ACCOUNT":           Account,
		"AZURE_STORAGE_KEY":               Key,
		"AZURE_STORAGE_DOMAIN":            s.Host,
		"AZURE_STORAGE_PROTOCOL":          "http",
		"AZURE_STORAGE_IS_LOCAL_EMULATOR": "true",
		"AZURE_STORAGE_SAS_TOKEN":         "",
		"AZURE_STORAGE_CONNECTION_STRING": "",
	} {
		t.Setenv(k, v)
	}
}

// MakeContainer creates a container.
func (s *Server) MakeContainer(t testing.TB, name string) {
	t.Helper()
	conn := fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;BlobEndpoint=http://%s/%s;", Account, Key, s.Host, Account)
	c, err := container.NewClientFromConnectionString(conn, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}
