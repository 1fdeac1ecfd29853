package admission

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
)

// benchManager builds 1,000 ClusterQueues in 10 cohorts (two GPU flavors each, with
// preemption enabled), admits 4 workloads per queue and queues 100,000 more.
func benchManager(b *testing.B, fair bool) *Manager {
	b.Helper()
	rng := rand.New(rand.NewSource(1))
	ob := MakeObjects().Flavors(MakeFlavor("h100").Obj(), MakeFlavor("a100").Obj())
	for i := 0; i < 1000; i++ {
		ob.ClusterQueues(MakeClusterQueue(fmt.Sprintf("cq%04d", i)).Cohort(fmt.Sprintf("cohort%d", i%10)).
			Preemption(api.PreemptLowerPriority, api.PreemptAny).ResourceGroup(
			MakeFlavorQuotas("h100").Resource(gpu, "16").Obj(),
			MakeFlavorQuotas("a100").Resource(gpu, "16").Obj()).Obj())
	}
	m, err := NewManager(ob.Obj(), Options{FairSharing: FairSharingConfig{Enabled: fair}})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		ns := fmt.Sprintf("ns-cq%04d", i)
		for j := 0; j < 4; j++ {
			wl := MakeWorkload(ns, fmt.Sprintf("run%d", j)).Request(gpu, "8").Obj()
			if err := m.Admit(wl, m.Assign(wl)); err != nil {
				b.Fatal(err)
			}
		}
		for j := 0; j < 100; j++ {
			wl := MakeWorkload(ns, fmt.Sprintf("w%d", j)).Priority(int32(rng.Intn(4))).CreatedAt(rng.Intn(10000)).
				Request(gpu, fmt.Sprint(1+rng.Intn(8))).Obj()
			if _, err := m.Add(wl); err != nil {
				b.Fatal(err)
			}
		}
	}
	return m
}

// BenchmarkAdmissionDecision is one decision of a cycle: the ordered heads, flavor
// assignment of the first and, since every queue is full, its victim search.
func BenchmarkAdmissionDecision(b *testing.B) {
	for _, fair := range []bool{false, true} {
		m := benchManager(b, fair) // built once: the decision below changes nothing
		b.Run(fmt.Sprintf("fairSharing=%v", fair), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				heads := m.Heads()
				a := m.Assign(heads[0].Workload)
				if a.Mode == Preempt {
					m.FindVictims(heads[0].Workload, a, nil)
				}
			}
		})
	}
}

// BenchmarkAssign is flavor assignment alone.
func BenchmarkAssign(b *testing.B) {
	m := benchManager(b, false)
	wl := m.Heads()[0].Workload
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Assign(wl)
	}
}

// BenchmarkQuotaClone is the cost of one what-if copy of the whole tree.
func BenchmarkQuotaClone(b *testing.B) {
	m := benchManager(b, false)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Quota().Clone()
	}
}
