package manifest

import (
	"fmt"
	"testing"

	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"
)

// genVolcanoTree draws up to 8 queues in a tree under root (each parent drawn among the
// queues before it), with weights, and GPU quota that is stated, capped or neither.
func genVolcanoTree(t *rapid.T) []volcanoQueue {
	var list ErrorList
	n := rapid.IntRange(1, 8).Draw(t, "queues")
	qs := make([]volcanoQueue, n)
	for i := range qs {
		q := &qs[i]
		q.c = errs{list: &list, kind: "Queue", name: fmt.Sprintf("q%d", i)}
		q.in.Name = q.c.name
		q.in.Spec.Weight = int32(rapid.IntRange(0, 10).Draw(t, "weight"))
		if p := rapid.IntRange(-1, i-1).Draw(t, "parent"); p >= 0 {
			q.in.Spec.Parent = qs[p].in.Name
		}
		gpus := func() resource.Quantity {
			return *resource.NewQuantity(rapid.Int64Range(0, 64).Draw(t, "gpus"), resource.DecimalSI)
		}
		switch rapid.IntRange(0, 3).Draw(t, "gpu quota") {
		case 1:
			q.in.Spec.Deserved = corev1.ResourceList{"nvidia.com/gpu": gpus()}
		case 2:
			q.in.Spec.Capability = corev1.ResourceList{"nvidia.com/gpu": gpus()}
		}
	}
	return qs
}

// Property: among the children of every parent (the top-level queues under the
// cluster), the weight shares sum to no more than what the parent holds less what the
// children state, and no share is above the queue's capability; a parent's own quota is
// never negative.
func TestVolcanoSharesProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		qs := genVolcanoTree(t)
		amounts := make([]volcanoAmounts, len(qs))
		for i := range qs {
			amounts[i] = parseVolcanoAmounts(qs[i])
		}
		total := resources.Amount(rapid.Int64Range(0, 256).Draw(t, "cluster gpus"))
		capacity := volcanoCapacity{total: resources.Vector{resources.NvidiaGPU: total, resources.CPU: 64000}, given: true}
		shares := volcanoShares(qs, amounts, capacity)
		pools := map[string]resources.Amount{VolcanoRootCohort: total}
		for i, q := range qs {
			pools[q.in.Name] = shares[i].amount[resources.NvidiaGPU]
		}
		derived, stated := map[string]resources.Amount{}, map[string]resources.Amount{}
		for i, q := range qs {
			s, p := shares[i], volcanoParent(q)
			if a, ok := amounts[i].stated(resources.NvidiaGPU); ok {
				stated[p] += a
			} else if s.derived[resources.NvidiaGPU] {
				derived[p] += s.amount[resources.NvidiaGPU]
			}
			if c, ok := amounts[i].capability[resources.NvidiaGPU]; ok && s.amount[resources.NvidiaGPU] > c {
				t.Fatalf("%s: share %d above its capability %d", q.in.Name, s.amount[resources.NvidiaGPU], c)
			}
			for n, own := range s.own {
				if own < 0 {
					t.Fatalf("%s: own quota of %s is %d", q.in.Name, n, own)
				}
			}
		}
		for p, d := range derived {
			if d > max(pools[p]-stated[p], 0) {
				t.Fatalf("children of %s share %d, more than its %d less the %d they state", p, d, pools[p], stated[p])
			}
		}
	})
}
