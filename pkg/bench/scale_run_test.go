package bench

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func TestRunScaleFinishesEveryJob(t *testing.T) {
	// One cohort: a 32-GPU gang needs the whole 4-node fleet's quota.
	spec := ScaleSpec{Nodes: 4, Jobs: 40, Queues: 4, Cohorts: 1, Seed: 3}
	res, err := RunScale(spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Jobs != 40 || res.Finished != 40 || res.StillPending != 0 {
		t.Fatalf("%d jobs, %d finished, %d never placed; want 40, 40, 0", res.Jobs, res.Finished, res.StillPending)
	}

	objs, _ := Generate(spec)
	var longest, serial time.Duration
	var gpuTime, demand int64 // GPU-seconds, GPUs
	for _, w := range objs.Workloads {
		d := w.Timing.Duration
		gpus := int64(w.PodSets[0].Count) * int64(w.PodSets[0].Requests[resources.NvidiaGPU])
		longest, serial = max(longest, d), serial+d
		gpuTime += gpus * int64(d/time.Second)
		demand += gpus
	}
	fleet := int64(spec.Nodes * scaleGPUsPerNode)
	// Lower bounds: the longest job, and all GPU-time spread over the fleet. Upper bound:
	// running one job at a time (an idle fleet always fits any one job, so it never idles
	// while jobs wait).
	makespan := res.Makespan.Duration()
	if lower := max(longest, time.Duration(gpuTime/fleet)*time.Second); makespan < lower || makespan > serial {
		t.Errorf("makespan %s outside [%s, %s]", makespan, lower, serial)
	}
	if demand <= fleet {
		t.Fatalf("the jobs ask for %d GPUs, not more than the fleet's %d: nobody waits", demand, fleet)
	}
	if res.MeanWait <= 0 || res.MeanWait.Duration() > makespan || res.P95Wait <= 0 || res.P95Wait.Duration() > makespan {
		t.Errorf("waits mean %s, p95 %s: want positive (%d GPUs asked of %d) and within the makespan %s",
			res.MeanWait.Duration(), res.P95Wait.Duration(), demand, fleet, makespan)
	}
	if res.SimulateWall <= 0 || res.Generate < 0 {
		t.Errorf("wall times: generate %s, simulate %s", res.Generate, res.SimulateWall)
	}
	if runtime.GOOS == "linux" && (res.SimulateCPU <= 0 || res.PeakRSS < 1<<20 || res.PeakRSS > 64<<30) {
		t.Errorf("getrusage figures: cpu %s, peak RSS %d bytes", res.SimulateCPU, res.PeakRSS)
	}

	again, err := RunScale(spec)
	if err != nil {
		t.Fatal(err)
	}
	if again.Finished != res.Finished || again.Makespan != res.Makespan || again.MeanWait != res.MeanWait || again.P95Wait != res.P95Wait {
		t.Errorf("same spec, different runs: %+v then %+v", res, again)
	}
}

func TestRunScaleRejectsBadSpecs(t *testing.T) {
	for flag, spec := range map[string]ScaleSpec{
		"--nodes":   {Nodes: 0, Jobs: 1, Queues: 1, Cohorts: 1},
		"--cohorts": {Nodes: 1, Jobs: 1, Queues: 2, Cohorts: 3},
		"--spread":  {Nodes: 1, Jobs: 1, Queues: 1, Cohorts: 1, Spread: -time.Second},
	} {
		if _, err := RunScale(spec); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%+v: error %v does not name %s", spec, err, flag)
		}
	}
}

// benchmarkScale runs RunScale on a generated fleet of 50 queues in 3 cohorts (seed 1),
// reporting the process CPU time and makespan per run and the peak RSS.
func benchmarkScale(b *testing.B, nodes, jobs int) {
	spec := ScaleSpec{Nodes: nodes, Jobs: jobs, Queues: 50, Cohorts: 3, Seed: 1}
	var res ScaleResult
	for i := 0; i < b.N; i++ {
		var err error
		if res, err = RunScale(spec); err != nil {
			b.Fatal(err)
		}
		if res.Finished != jobs {
			b.Fatalf("%d of %d jobs finished", res.Finished, jobs)
		}
	}
	b.ReportMetric(res.SimulateCPU.Seconds(), "cpu-s/op")
	b.ReportMetric(float64(res.PeakRSS)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(res.Makespan.Duration().Hours(), "makespan-h")
}

func BenchmarkScale100Nodes1000Jobs(b *testing.B)   { benchmarkScale(b, 100, 1000) }
func BenchmarkScale1000Nodes10000Jobs(b *testing.B) { benchmarkScale(b, 1000, 10000) }

// ScaleSpec.HeadOrder reaches the engine: Kueue's head order finishes every job too,
// with other decisions than the default priority order on a fleet with borrowing.
func TestRunScaleHeadOrder(t *testing.T) {
	spec := ScaleSpec{Nodes: 20, Jobs: 300, Queues: 6, Cohorts: 2, Seed: 5}
	plain, err := RunScale(spec)
	if err != nil {
		t.Fatal(err)
	}
	spec.HeadOrder = engine.HeadOrderKueue
	kueue, err := RunScale(spec)
	if err != nil {
		t.Fatal(err)
	}
	if kueue.Finished != spec.Jobs || kueue.StillPending != 0 {
		t.Fatalf("kueue head order: %d of %d finished, %d never placed", kueue.Finished, spec.Jobs, kueue.StillPending)
	}
	if kueue.Considered == plain.Considered && kueue.MeanWait == plain.MeanWait && kueue.Makespan == plain.Makespan {
		t.Errorf("the same run under both head orders (%d considered, mean wait %s): the order did not reach the engine",
			kueue.Considered, kueue.MeanWait.Duration())
	}
}

// An unknown head order is refused by the engine's configuration.
func TestRunScaleRejectsUnknownHeadOrder(t *testing.T) {
	_, err := RunScale(ScaleSpec{Nodes: 2, Jobs: 4, Queues: 2, Cohorts: 1, Seed: 1, HeadOrder: "fastest"})
	if err == nil || !strings.Contains(err.Error(), "headOrder") {
		t.Fatalf("RunScale = %v, want an error naming headOrder", err)
	}
}
