package bench

import (
	"testing"
	"time"
)

// The cycle experiment on a small fleet: the first cycle fills the cluster, a quiet
// cycle (nothing changed) admits nothing, and each burst of completions admits again.
func TestRunCyclesSmall(t *testing.T) {
	res, err := RunCycles(CycleSpec{Scale: ScaleSpec{Nodes: 20, Jobs: 400, Queues: 10, Cohorts: 2, Seed: 3}, Quiet: 3, Bursts: 2, BurstSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pending != 400 || res.FirstAdmitted == 0 || res.FirstDecisions == 0 {
		t.Fatalf("first cycle admitted %d, decided %d of %d", res.FirstAdmitted, res.FirstDecisions, res.Pending)
	}
	if len(res.Quiet) != 3 || len(res.Burst) != 2 {
		t.Fatalf("measured %d quiet and %d burst cycles, want 3 and 2", len(res.Quiet), len(res.Burst))
	}
	if res.BurstAdmitted == 0 {
		t.Errorf("bursts of completions admitted nothing")
	}
}

// BenchmarkCycle10000Nodes100000Pending is the cycle target: 10,000 nodes,
// 100,000 pending in 1,000 ClusterQueues; it reports the first cycle, the p99 of quiet
// cycles and of cycles after 1,000 completions, and admission decisions per second.
func BenchmarkCycle10000Nodes100000Pending(b *testing.B) {
	for i := 0; i < b.N; i++ {
		res, err := RunCycles(CycleSpec{Scale: ScaleSpec{Nodes: 10000, Jobs: 100000, Queues: 1000, Cohorts: 10, Seed: 1},
			Quiet: 20, Bursts: 5, BurstSize: 1000})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.First.Seconds()*1000, "first-ms")
		b.ReportMetric(float64(res.FirstDecisions)/res.First.Seconds(), "decisions/s")
		b.ReportMetric(Percentile(res.Quiet, 99).Seconds()*1000, "quiet-p99-ms")
		b.ReportMetric(Percentile(res.Burst, 99).Seconds()*1000, "burst-p99-ms")
	}
}

func TestPercentile(t *testing.T) {
	d := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		p    int
		want time.Duration
	}{{50, 5}, {99, 10}, {100, 10}, {10, 1}, {0, 1}} {
		if got := Percentile(d, c.p); got != c.want {
			t.Errorf("p%d = %d, want %d", c.p, got, c.want)
		}
	}
	if Percentile(nil, 99) != 0 {
		t.Error("empty: not 0")
	}
}
