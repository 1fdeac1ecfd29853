package placement

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
)

// Allows says whether workload w may keep a placement (its pods, e.g. from
// AssumedSince) given the reservations in force, and if not, why. A pod on a reserved
// node is allowed when the workload ends (expectedEnd, from its max runtime or known
// duration) no later than the reservation starts, or when it uses none of the GPUs the
// reservation needs on that node. A workload with no runtime bound (zero expectedEnd)
// never ends in time, so it may only use GPUs no reservation needs. A reservation never
// blocks its own workload.
//
// Reservations hold GPUs, the scarce resource; CPU and memory on a reserved node are
// not held (see docs/placement.md).
func (s ReservationSet) Allows(w api.WorkloadID, pods []cluster.BoundPod, expectedEnd time.Time) (bool, string) {
	for _, r := range s {
		if r.Workload == w {
			continue
		}
		if !expectedEnd.IsZero() && !expectedEnd.After(r.Start) {
			continue
		}
		reserved := r.devicesByNode()
		for _, p := range pods {
			ids, onReserved := reserved[p.Node]
			if !onReserved {
				continue
			}
			if gpu, clash := sharedGPU(p.Devices.IDs(), ids); clash {
				return false, fmt.Sprintf("pod %s would hold %s on node %s, reserved for %s from %s; %s",
					p.Ref, gpu, p.Node, r.Workload, r.Start.UTC().Format(time.RFC3339), endClause(expectedEnd, r.Start))
			}
		}
	}
	return true, ""
}

// endClause explains why the workload's end does not clear the reservation.
func endClause(end, start time.Time) string {
	if end.IsZero() {
		return "the workload has no runtime bound"
	}
	return fmt.Sprintf("the workload ends at %s, %s after the reservation starts", end.UTC().Format(time.RFC3339), end.Sub(start))
}

// devicesByNode maps each reserved node to the device IDs reserved on it (a node with
// only non-GPU pods maps to an empty list).
func (r Reservation) devicesByNode() map[string][]string {
	out := make(map[string][]string, len(r.Pods))
	for _, p := range r.Pods {
		out[p.Node] = append(out[p.Node], p.Devices.IDs()...)
	}
	return out
}

// gpuOf is the physical GPU of a device ID: "GPU-3/mig-1g.10gb@4" -> "GPU-3". Two IDs on
// the same physical GPU are treated as a clash even when the slices differ, because MIG
// instances can overlap in memory slices and replicas share the GPU's compute.
func gpuOf(id string) string {
	if i := strings.IndexByte(id, '/'); i >= 0 {
		return id[:i]
	}
	return id
}

// sharedGPU returns the first physical GPU that both ID lists touch.
func sharedGPU(a, b []string) (string, bool) {
	set := make(map[string]bool, len(b))
	for _, id := range b {
		set[gpuOf(id)] = true
	}
	for _, id := range a {
		if g := gpuOf(id); set[g] {
			return g, true
		}
	}
	return "", false
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
