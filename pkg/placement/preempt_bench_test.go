package placement

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
)

// benchCluster is 1,000 full 8-GPU nodes running 2,000 gangs: each gang has two pods of
// 2 GPUs, on neighbouring nodes, with seeded random priorities, spot flags, ages,
// checkpoints and end times.
func benchCluster(b testing.TB) (*cluster.Snapshot, []Running) {
	b.Helper()
	const nodes, gangs = 1000, 2000
	rnd := rand.New(rand.NewSource(42))
	var specs []peGang
	for g := 0; g < gangs; g++ {
		n := (g / 2) % nodes
		r := MakeRunning(fmt.Sprintf("ns/g%04d", g)).Priority(int32(rnd.Intn(5))).
			Started(peNow.Add(-time.Duration(1+rnd.Intn(600)) * time.Minute)).
			Checkpoint(peNow.Add(-time.Duration(rnd.Intn(60)) * time.Minute)).
			Ends(peNow.Add(time.Duration(1+rnd.Intn(600)) * time.Minute)).
			Queue(fmt.Sprintf("q%d", g%4))
		if rnd.Intn(3) == 0 {
			r.Spot()
		}
		specs = append(specs, peGang{run: r.Obj(), perPod: 2, nodes: []string{
			fmt.Sprintf("n%02d", n), fmt.Sprintf("n%02d", (n+1)%nodes)}})
	}
	return peBind(b, peNodes(b, nodes, 8), specs)
}

// BenchmarkSelectVictims: a 4 × 8-GPU gang of priority 3 needs four whole nodes freed
// on 1,000 full nodes with 2,000 running gangs, placed by PlaceWorkload.
func BenchmarkSelectVictims(b *testing.B) {
	snap, running := benchCluster(b)
	w := peWorkload("big", 4, 8)
	req := PreemptionRequest{Preemptor: Preemptor{ID: w.ID(), Priority: 3}, Running: running, Now: peNow,
		Budgets: map[string]api.DisruptionBudget{"q0": {MaxGPUs: 64, Window: time.Hour}}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := SelectVictims(snap.Overlay(), WorkloadFit(w, nil, Options{Rand: rand.New(rand.NewSource(1))}), req)
		if err != nil || res.Outcome != PreemptFound {
			b.Fatalf("%v %s", err, res.Outcome)
		}
	}
}

// BenchmarkPlanReservation: the same gang's ETA on the same cluster.
func BenchmarkPlanReservation(b *testing.B) {
	snap, running := benchCluster(b)
	w := peWorkload("big", 4, 8)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := PlanReservation(snap.Overlay(), WorkloadFit(w, nil, Options{Rand: rand.New(rand.NewSource(1))}),
			ReservationRequest{Workload: w.ID(), Running: byEnd(b, running), Now: peNow})
		if err != nil || res.Outcome != Reserved {
			b.Fatalf("%v %s", err, res.Outcome)
		}
	}
}
