package remote

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/sshd"
)

// payloadSizesMB is a node payload shaped like WMCO's: a few large binaries and many small files,
// 15 files, 150 MB in all.
var payloadSizesMB = []float64{40, 25, 20, 15, 12, 10, 8, 6, 5, 3, 2, 1.5, 1.2, 0.8, 0.5}

// writePayload generates the payload as local files (pseudo-random, so nothing compresses it).
func writePayload(b *testing.B) (dir string, files []string, total int64) {
	b.Helper()
	dir = b.TempDir()
	rng := rand.NewChaCha8([32]byte{1})
	for i, mb := range payloadSizesMB {
		data := make([]byte, int(mb*1e6))
		_, _ = rng.Read(data)
		path := filepath.Join(dir, fmt.Sprintf("file%02d.bin", i))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
		files, total = append(files, path), total+int64(len(data))
	}
	return dir, files, total
}

func reportMBps(b *testing.B, total int64, elapsed time.Duration) {
	b.ReportMetric(float64(total)*float64(b.N)/elapsed.Seconds()/1e6, "MB/s")
}

// BenchmarkUploadNodePayload sends the payload with wmcon's client to a simulated host and to a real
// sshd, and with OpenSSH's own sftp -b and scp to the same sshd, for comparison.
func BenchmarkUploadNodePayload(b *testing.B) {
	_, files, total := writePayload(b)
	uploads := func(remoteDir string, windows bool) []Upload {
		var out []Upload
		for _, f := range files {
			remote := filepath.Join(remoteDir, filepath.Base(f))
			if windows {
				remote = remoteDir + `\` + filepath.Base(f)
			}
			out = append(out, Upload{Local: f, Remote: remote})
		}
		return out
	}
	b.Run("wmcon-to-winsim", func(b *testing.B) {
		key := newTestKey(b)
		h := startSim(b, key, windows.Options{})
		c := clientFor(b, newTestPool(b, key, nil), h)
		benchUpload(b, c, uploads(`C:\k\payload`, true), total)
	})
	b.Run("wmcon-to-sshd", func(b *testing.B) {
		s := sshd.Start(b)
		c := sshdClient(b, s)
		benchUpload(b, c, uploads(filepath.Join(s.Dir, "wmcon"), false), total)
	})
	b.Run("openssh-sftp-b", func(b *testing.B) {
		s := sshd.Start(b)
		dest := filepath.Join(s.Dir, "sftp")
		if err := os.MkdirAll(dest, 0o700); err != nil {
			b.Fatal(err)
		}
		var batch strings.Builder
		for _, f := range files {
			fmt.Fprintf(&batch, "put %s %s\n", f, filepath.Join(dest, filepath.Base(f)))
		}
		batchFile := filepath.Join(b.TempDir(), "batch")
		if err := os.WriteFile(batchFile, []byte(batch.String()), 0o600); err != nil {
			b.Fatal(err)
		}
		args := append(opensshOptions(s), "-P", strconv.Itoa(s.Port), "-b", batchFile, s.User+"@127.0.0.1")
		benchCommand(b, "sftp", args, total)
	})
	b.Run("openssh-scp", func(b *testing.B) {
		s := sshd.Start(b)
		dest := filepath.Join(s.Dir, "scp")
		if err := os.MkdirAll(dest, 0o700); err != nil {
			b.Fatal(err)
		}
		args := append(opensshOptions(s), "-q", "-P", strconv.Itoa(s.Port))
		args = append(append(args, files...), s.User+"@127.0.0.1:"+dest+"/")
		benchCommand(b, "scp", args, total)
	})
}

func benchUpload(b *testing.B, c *Client, files []Upload, total int64) {
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := c.Upload(ctx, files, UploadOptions{Force: true}); err != nil {
			b.Fatal(err)
		}
	}
	reportMBps(b, total, time.Since(start))
}

func benchCommand(b *testing.B, name string, args []string, total int64) {
	path, err := exec.LookPath(name)
	if err != nil {
		b.Skipf("%s not installed", name)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if out, err := exec.Command(path, args...).CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
	reportMBps(b, total, time.Since(start))
}

func opensshOptions(s *sshd.Server) []string {
	return []string{"-i", s.ClientKeyFile, "-o", "UserKnownHostsFile=" + s.KnownHosts, "-o", "StrictHostKeyChecking=yes",
		"-o", "BatchMode=yes", "-F", "/dev/null"}
}

func sshdClient(b *testing.B, s *sshd.Server) *Client {
	p, err := NewPool(Config{Auth: Auth{KeyPEM: s.ClientKeyPEM}, User: s.User,
		HostKeys: NewKnownHostsStore(s.KnownHosts), BastionHostKeys: NewKnownHostsStore(s.KnownHosts), KeepaliveInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	c, err := p.Client(Target{Node: "sshd", Addr: s.Addr})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkInstallNodeServices counts the SSH round trips to install and start the seven node services
// on a fresh host: EnsureServices batches, the one-service-at-a-time way is shown for comparison.
func BenchmarkInstallNodeServices(b *testing.B) {
	install := map[string]func(context.Context, *Client, []ServiceSpec) error{
		"ensure-batched": func(ctx context.Context, c *Client, specs []ServiceSpec) error { return c.EnsureServices(ctx, specs) },
		"one-by-one": func(ctx context.Context, c *Client, specs []ServiceSpec) error {
			for _, s := range specs {
				if st, err := c.ServiceQuery(ctx, s.Name); err != nil || st.Exists {
					return err
				}
				if err := c.CreateService(ctx, s); err != nil {
					return err
				}
				if err := c.StartService(ctx, s.Name); err != nil {
					return err
				}
			}
			return nil
		},
	}
	for _, name := range []string{"ensure-batched", "one-by-one"} {
		b.Run(name, func(b *testing.B) {
			var trips int64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				key := newTestKey(b)
				h := startSim(b, key, windows.Options{})
				specs := nodeServiceSpecs(b, h)
				c := clientFor(b, newTestPool(b, key, nil), h)
				b.StartTimer()
				if err := install[name](context.Background(), c, specs); err != nil {
					b.Fatal(err)
				}
				trips += c.Stats().RoundTrips
				b.StopTimer()
				h.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(trips)/float64(b.N), "roundtrips")
		})
	}
}
