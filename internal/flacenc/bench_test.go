package flacenc

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// benchSignals are a minute of speech-like mono 16 kHz audio and 20 seconds
// of music-like stereo 44.1 kHz audio.
var benchCases = []struct {
	name string
	gen  func() ([]int32, Info)
}{
	{"speech16k", func() ([]int32, Info) { return speechLike(16000, 60, 1, 16), Info{16000, 1, 16} }},
	{"music44k", func() ([]int32, Info) { return musicLike(44100, 20, 2, 2, 16), Info{44100, 2, 16} }},
}

// cpuTime is the user+system CPU time of this process so far. The numbers
// below use CPU time, not wall time, because the test machine is shared.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report adds throughput per CPU-second: M samples/s (all channels) and
// times real time.
func report(b *testing.B, cpu time.Duration, samples int, info Info) {
	sec := cpu.Seconds() / float64(b.N)
	if sec <= 0 {
		return
	}
	b.ReportMetric(float64(samples)/sec/1e6, "Msamples/cpu-s")
	b.ReportMetric(float64(samples/info.Channels)/float64(info.SampleRate)/sec, "x_realtime")
}

// BenchmarkEncode reports M samples/s (all channels) and times real time.
func BenchmarkEncode(b *testing.B) {
	for _, bc := range benchCases {
		s, info := bc.gen()
		for _, lv := range []struct {
			name  string
			level Level
		}{{"default", LevelDefault}, {"fast", LevelFast}, {"best", LevelBest}} {
			b.Run(bc.name+"/"+lv.name, func(b *testing.B) {
				dst := make([]byte, 0, len(s)*2)
				b.SetBytes(int64(len(s) * info.BitsPerSample / 8))
				cpu0 := cpuTime()
				b.ResetTimer()
				for b.Loop() {
					var err error
					dst, err = Append(dst[:0], s, info, Options{Level: lv.level})
					if err != nil {
						b.Fatal(err)
					}
				}
				report(b, cpuTime()-cpu0, len(s), info)
				b.ReportMetric(float64(len(dst))/float64(len(s)*info.BitsPerSample/8), "ratio_pcm")
			})
		}
	}
}

// BenchmarkFlacCLI times `flac -5` on the same signals (process start and
// file I/O included), measured as the child's CPU time.
func BenchmarkFlacCLI(b *testing.B) {
	cli := flacCLI(b)
	for _, bc := range benchCases {
		s, info := bc.gen()
		dir := b.TempDir()
		in := filepath.Join(dir, "in.raw")
		raw := make([]byte, 0, len(s)*2)
		for _, x := range s {
			raw = append(raw, byte(x), byte(x>>8))
		}
		if err := os.WriteFile(in, raw, 0o644); err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name+"/flac-5", func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			var total time.Duration
			for b.Loop() {
				cmd := exec.Command(cli, "-5", "-s", "-f", "--force-raw-format", "--endian=little", "--sign=signed",
					"--channels="+itoa(info.Channels), "--bps=16", "--sample-rate="+itoa(info.SampleRate),
					"--no-padding", "--no-seektable", "-o", filepath.Join(dir, "out.flac"), in)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				total += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			report(b, total, len(s), info)
		})
	}
}
