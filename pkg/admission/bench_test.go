package admission

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
)

// benchAdmitter builds 1,000 ClusterQueues in 10 cohorts (two GPU flavors each, with
// preemption enabled), admits 4 workloads per queue and returns one pending workload of
// random size and priority per queue.
func benchAdmitter(b *testing.B, fair bool) (*admitter, []*api.Workload) {
	b.Helper()
	rng := rand.New(rand.NewSource(1))
	ob := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj(), gt.MakeFlavor("a100").Obj())
	for i := 0; i < 1000; i++ {
		ob.ClusterQueues(gt.MakeClusterQueue(fmt.Sprintf("cq%04d", i)).Cohort(fmt.Sprintf("cohort%d", i%10)).
			Preemption(api.PreemptLowerPriority, api.PreemptAny).ResourceGroup(
			gt.MakeFlavorQuotas("h100").Resource(gpu, "16").Obj(),
			gt.MakeFlavorQuotas("a100").Resource(gpu, "16").Obj()).Obj())
	}
	m := newAdmitter(b, ob.Obj(), Options{FairSharing: FairSharingConfig{Enabled: fair}})
	var pending []*api.Workload
	for i := 0; i < 1000; i++ {
		ns := fmt.Sprintf("ns-cq%04d", i)
		for j := 0; j < 4; j++ {
			wl := gt.MakeWorkload(ns, fmt.Sprintf("run%d", j)).Request(gpu, "8").Obj()
			if err := m.Admit(wl, m.assign(wl)); err != nil {
				b.Fatal(err)
			}
		}
		pending = append(pending, gt.MakeWorkload(ns, "w").Priority(int32(rng.Intn(4))).Created(time.Duration(rng.Intn(10000))*time.Second).
			Request(gpu, fmt.Sprint(1+rng.Intn(8))).Obj())
	}
	return m, pending
}

// BenchmarkAdmissionDecision is one admission decision of a cycle: flavor assignment of
// a pending workload and, since every queue is full, its victim search.
func BenchmarkAdmissionDecision(b *testing.B) {
	for _, fair := range []bool{false, true} {
		m, pending := benchAdmitter(b, fair) // built once: the decision below changes nothing
		b.Run(fmt.Sprintf("fairSharing=%v", fair), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				wl := pending[i%len(pending)]
				a := m.assign(wl)
				if a.Mode == Preempt {
					m.FindVictims(wl, a, nil)
				}
			}
		})
	}
}

// BenchmarkAssign is flavor assignment alone.
func BenchmarkAssign(b *testing.B) {
	m, pending := benchAdmitter(b, false)
	wl := pending[0]
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.assign(wl)
	}
}

// BenchmarkQuotaClone is the cost of one what-if copy of the whole tree.
func BenchmarkQuotaClone(b *testing.B) {
	m, _ := benchAdmitter(b, false)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Clone()
	}
}
