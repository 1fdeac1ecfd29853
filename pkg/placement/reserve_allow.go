package placement

import (
	"fmt"
	"sort"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
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
		reserved := r.gpusByNode()
		for _, p := range pods {
			gpus, onReserved := reserved[p.Node]
			if !onReserved {
				continue
			}
			if gpu, clash := sharedGPU(p.Devices, gpus); clash {
				return false, fmt.Sprintf("pod %s would hold %s on node %s, reserved for %s from %s; %s",
					p.Ref, devices.GPUID(gpu), p.Node, r.Workload, r.Start.UTC().Format(time.RFC3339), endClause(expectedEnd, r.Start))
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

// gpusByNode maps each reserved node to the GPU indices reserved on it (a node with
// only non-GPU pods maps to an empty set).
func (r Reservation) gpusByNode() map[string]map[int]bool {
	out := make(map[string]map[int]bool, len(r.Pods))
	for _, p := range r.Pods {
		set := out[p.Node]
		if set == nil {
			set = map[int]bool{}
			out[p.Node] = set
		}
		for _, d := range p.Devices.Devices {
			set[d.GPU] = true
		}
	}
	return out
}

// sharedGPU returns the first GPU of a that is reserved. Devices on the same physical GPU
// are treated as a clash even when the slices differ, because MIG instances can overlap
// in memory slices and replicas share the GPU's compute.
func sharedGPU(a devices.Assignment, reserved map[int]bool) (int, bool) {
	for _, d := range a.Devices {
		if reserved[d.GPU] {
			return d.GPU, true
		}
	}
	return 0, false
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
