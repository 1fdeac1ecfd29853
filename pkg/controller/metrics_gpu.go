package controller

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// poolMode keys GPU units by node pool and sharing mode.
type poolMode struct{ Pool, Mode string }

// gpuUnits is the GPU accounting the metrics report, in milli-GPU.
type gpuUnits struct {
	Allocated, Free map[poolMode]resources.MilliGPU
	// Stranded is free GPU capacity no pending pod shape can use: the free units of
	// every node on which none of the pending workloads' pods fits by devices alone
	// (a node-level simplification of the simulator's per-GPU definition, whose
	// function is internal to pkg/sim). With nothing pending, nothing is stranded.
	Stranded resources.MilliGPU
}

// countGPUUnits walks the nodes of ov once; pending supplies the shapes in demand.
func countGPUUnits(ov *cluster.Overlay, pending []engine.Pending) gpuUnits {
	u := gpuUnits{Allocated: map[poolMode]resources.MilliGPU{}, Free: map[poolMode]resources.MilliGPU{}}
	shapes := pendingShapes(pending)
	for i := 0; i < ov.NumNodes(); i++ {
		nd := ov.Devices(i)
		if nd == nil {
			continue
		}
		pool := ov.Node(i).Pool
		free := ov.GPUFreeMilli(i)
		var nodeFree resources.MilliGPU
		for k, g := range nd.GPUs() {
			if k >= len(free) {
				break
			}
			key := poolMode{Pool: pool, Mode: string(g.Sharing.Mode)}
			if key.Mode == "" {
				key.Mode = string(devices.Exclusive)
			}
			u.Free[key] += free[k]
			u.Allocated[key] += resources.MilliPerGPU - free[k]
			nodeFree += free[k]
		}
		if nodeFree > 0 && len(shapes) > 0 && !fitsAny(nd, shapes) {
			u.Stranded += nodeFree
		}
	}
	return u
}

// pendingShapes are the distinct GPU requests of the pending workloads' pods, in a
// stable order.
func pendingShapes(pending []engine.Pending) []devices.Request {
	seen := map[string]devices.Request{}
	for _, p := range pending {
		if p.Workload == nil {
			continue
		}
		for _, ps := range p.Workload.PodSets {
			r, err := devices.ParseRequest(ps.Requests)
			if err != nil || r.IsZero() {
				continue
			}
			seen[ps.Requests.String()] = r
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]devices.Request, len(keys))
	for i, k := range keys {
		out[i] = seen[k]
	}
	return out
}

func fitsAny(nd *devices.NodeDevices, shapes []devices.Request) bool {
	for _, r := range shapes {
		if _, refusal := nd.Fit(r); refusal == nil {
			return true
		}
	}
	return false
}
