package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/sim/trace"
)

// BenchmarkFragRun times one fgd run of the fragmentation experiment on a slice of the
// openb trace (or the inline sample when the trace is absent).
func BenchmarkFragRun(b *testing.B) {
	nodes, pods := smallOpenB(b)
	cfg := FragConfig{Nodes: nodes, Pods: pods, InflatePercent: 130, CurveStepPermille: 10}
	for i := 0; i < b.N; i++ {
		if _, err := RunFragOnce(cfg, PlacementPolicy("fgd"), 42); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJCTReplay times the fifo replay of the first 1,000 Philly jobs of October 2017
// (skipped, saying so, when the trace is absent).
func BenchmarkJCTReplay(b *testing.B) {
	jf, err := os.Open(filepath.Join(tracesDir, "philly", "philly.csv"))
	if err != nil {
		b.Skipf("Philly trace not present: %v", err)
	}
	defer jf.Close()
	vf, err := os.Open(filepath.Join(tracesDir, "philly", "philly_vc.csv"))
	if err != nil {
		b.Skipf("Philly VC file not present: %v", err)
	}
	defer vf.Close()
	jobs, err := trace.ReadPhillyJobs(jf, "philly.csv")
	if err != nil {
		b.Fatal(err)
	}
	vcs, err := trace.ReadPhillyVCs(vf, "philly_vc.csv")
	if err != nil {
		b.Fatal(err)
	}
	imp, err := trace.ImportPhilly(jobs, vcs, trace.PhillyOptions{From: time.Date(2017, 10, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		b.Fatal(err)
	}
	imp.Objects.Workloads = imp.Objects.Workloads[:1000]
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := RunJCT(imp.Objects, JCTFIFO, 42, 0); err != nil {
			b.Fatal(err)
		}
	}
}
