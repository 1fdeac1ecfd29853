package cluster

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// Property: eachCharge visits exactly the amounts of chargeOn, on nodes with and without
// a pods limit, for requests with GPU names, zero and negative amounts and explicit pods.
func TestPropEachChargeMatchesChargeOn(t *testing.T) {
	names := []resources.Name{resources.CPU, resources.Memory, resources.Pods, resources.NvidiaGPU,
		resources.GPUMilli, "ephemeral-storage", "example.com/foo"}
	rapid.Check(t, func(t *rapid.T) {
		n := &Node{Allocatable: resources.Vector{resources.CPU: 8000}}
		if rapid.Bool().Draw(t, "podsLimit") {
			n.Allocatable[resources.Pods] = 110
		}
		req := resources.Vector{}
		for range rapid.IntRange(0, 6).Draw(t, "entries") {
			req[rapid.SampledFrom(names).Draw(t, "name")] = resources.Amount(rapid.IntRange(-2, 5).Draw(t, "amount"))
		}
		want := chargeOn(n, req)
		got := resources.Vector{}
		eachCharge(n, req, func(k resources.Name, a resources.Amount) {
			if _, dup := got[k]; dup {
				t.Fatalf("%s visited twice", k)
			}
			got[k] = a
		})
		if len(got) != len(want) {
			t.Fatalf("eachCharge %v, chargeOn %v", got, want)
		}
		for k, a := range want {
			if got[k] != a {
				t.Fatalf("eachCharge %v, chargeOn %v", got, want)
			}
		}
	})
}
