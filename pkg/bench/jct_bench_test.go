package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gantry-sched/gantry/pkg/sim/trace"
)

// phillyWindow imports a named window of the shared Philly trace, skipping the test
// when the trace is absent.
func phillyWindow(tb testing.TB, name string) *trace.PhillyImport {
	tb.Helper()
	files := PhillyFiles{Jobs: filepath.Join(tracesDir, "philly", "philly.csv"), VCs: filepath.Join(tracesDir, "philly", "philly_vc.csv")}
	if _, err := os.Stat(files.Jobs); err != nil {
		tb.Skipf("Philly trace not present: %v", err)
	}
	w, err := JCTWindowNamed(name)
	if err != nil {
		tb.Fatal(err)
	}
	imp, err := LoadPhilly(files, w, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return imp
}

// BenchmarkJCTFull and BenchmarkJCTLoaded replay the whole Oct-Nov 2017 trace (68,496
// jobs) on the whole cluster and on 72 nodes, one sub-benchmark per policy (select with
// -bench 'JCTLoaded/gantry$'); they report the CPU seconds of a replay, the number
// `gantry bench jct` prints (GANTRY_BENCH_ETA=1 adds the ETA probe, as --eta does).
func BenchmarkJCTFull(b *testing.B)   { benchmarkJCTWindow(b, JCTWindowFull) }
func BenchmarkJCTLoaded(b *testing.B) { benchmarkJCTWindow(b, JCTWindowLoaded) }

func benchmarkJCTWindow(b *testing.B, window string) {
	imp := phillyWindow(b, window)
	for _, p := range JCTPolicies() {
		b.Run(p, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				r, err := RunJCTWith(imp.Objects, p, JCTOptions{Seed: 42, ETA: os.Getenv("GANTRY_BENCH_ETA") != ""})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r.CPU.Seconds(), "cpu-s/op")
				b.ReportMetric(r.Wait.Mean.Duration().Minutes(), "wait-min")
			}
		})
	}
}
