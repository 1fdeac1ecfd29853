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

// nodeHealth keys GPU counts by node (with its pool and GPU model) and health.
type nodeHealth struct{ Node, Pool, Model, Health string }

// The values of the health label of gantry_node_gpus.
const (
	gpuHealthy   = "healthy"
	gpuUnhealthy = "unhealthy"
)

// gpuUnits is the GPU accounting the metrics report, in milli-GPU, and the GPU count
// per node and health.
type gpuUnits struct {
	// Allocated and Free cover the healthy GPUs: an unhealthy GPU offers nothing and
	// its holders are evicted, so it is neither in use nor free; Nodes counts it.
	Allocated, Free map[poolMode]resources.MilliGPU
	// Stranded is free GPU capacity no pending pod shape can use, by pool: the free units
	// of every node on which none of the pending workloads' pods fits by devices alone
	// (a node-level simplification of the simulator's per-GPU definition, whose
	// function is internal to pkg/sim). With nothing pending, nothing is stranded. Every
	// pool with GPUs has an entry, 0 included.
	Stranded map[string]resources.MilliGPU
	Nodes    map[nodeHealth]int
}

// countGPUUnits walks the nodes of ov once; shapes are the GPU requests in demand
// (pendingShapes).
func countGPUUnits(ov *cluster.Overlay, shapes []devices.Request) gpuUnits {
	u := gpuUnits{Allocated: map[poolMode]resources.MilliGPU{}, Free: map[poolMode]resources.MilliGPU{},
		Stranded: map[string]resources.MilliGPU{}, Nodes: map[nodeHealth]int{}}
	for i := 0; i < ov.NumNodes(); i++ {
		nd := ov.Devices(i)
		if nd == nil {
			continue
		}
		node := ov.Node(i)
		nodeFree := u.countNode(node.Name, node.Pool, nd, ov.GPUFreeMilli(i))
		stranded := u.Stranded[node.Pool] // a pool with nothing stranded reports 0
		if nodeFree > 0 && len(shapes) > 0 && !fitsAny(nd, shapes) {
			stranded += nodeFree
		}
		u.Stranded[node.Pool] = stranded
	}
	return u
}

// countNode adds one node's GPUs (free: its per-GPU free view, by position) and returns
// what it has free.
func (u *gpuUnits) countNode(name, pool string, nd *devices.NodeDevices, free []resources.MilliGPU) resources.MilliGPU {
	var nodeFree resources.MilliGPU
	for k := range nd.NumGPUs() {
		model, mode, healthy := nd.GPUAt(k)
		health := gpuHealthy
		if !healthy {
			health = gpuUnhealthy
		}
		u.Nodes[nodeHealth{Node: name, Pool: pool, Model: string(model), Health: health}]++
		if k >= len(free) || !healthy {
			continue
		}
		key := poolMode{Pool: pool, Mode: string(mode)}
		if key.Mode == "" {
			key.Mode = string(devices.Exclusive)
		}
		u.Free[key] += free[k]
		u.Allocated[key] += resources.MilliPerGPU - free[k]
		nodeFree += free[k]
	}
	return nodeFree
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
