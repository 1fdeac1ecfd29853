package cluster_test

import (
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// assumeRandom assumes pod Index step of a random request on a random node where the
// device model says it fits, and adds it to live; it does nothing when it does not fit.
func assumeRandom(rt *rapid.T, ov *cluster.Overlay, reqs []resources.Vector, step int, live []cluster.PodRef) []cluster.PodRef {
	i := rapid.IntRange(0, ov.NumNodes()-1).Draw(rt, "node")
	req := rapid.SampledFrom(reqs).Draw(rt, "req")
	var a devices.Assignment
	if r, _ := devices.ParseRequest(req); !r.IsZero() {
		if ov.Devices(i) == nil {
			return live
		}
		var ref *devices.Refusal
		if a, ref = ov.Devices(i).Fit(r); ref != nil {
			return live
		}
	}
	pod := cluster.PodRef{Workload: "ns/w", PodSet: "p", Index: step}
	if err := ov.AssumeAt(pod, i, req, a); err == nil {
		live = append(live, pod)
	}
	return live
}

// forgetRandom forgets one random pod of live and drops it from live.
func forgetRandom(rt *rapid.T, ov *cluster.Overlay, live []cluster.PodRef) []cluster.PodRef {
	if len(live) == 0 {
		return live
	}
	k := rapid.IntRange(0, len(live)-1).Draw(rt, "victim")
	if err := ov.Forget(live[k]); err != nil {
		rt.Fatalf("forget %s: %v", live[k], err)
	}
	return append(live[:k], live[k+1:]...)
}
