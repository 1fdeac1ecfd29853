package dashboard

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/view"
)

// Sample is what a live dashboard remembers of one snapshot for its charts.
type Sample struct {
	At time.Time
	// Allocated and Capacity are GPU capacity in use and in total, over the healthy GPUs
	// of ready nodes.
	Allocated, Capacity resources.MilliGPU
	// Stranded is free GPU capacity no pending workload's pod fits in (sampleOf).
	Stranded resources.MilliGPU
	// Pending counts pending and evicted workloads; MeanWait and MaxWait are how long
	// they have waited.
	Pending           int
	MeanWait, MaxWait time.Duration
}

// history is a bounded ring of samples, oldest first.
type history struct {
	max     int
	samples []Sample
}

func (h *history) add(s Sample) {
	if len(h.samples) >= h.max {
		// Copy down rather than reslice, so the backing array does not grow forever.
		n := copy(h.samples, h.samples[len(h.samples)-h.max+1:])
		h.samples = h.samples[:n]
	}
	h.samples = append(h.samples, s)
}

func (h *history) last() (Sample, bool) {
	if len(h.samples) == 0 {
		return Sample{}, false
	}
	return h.samples[len(h.samples)-1], true
}

func (h *history) all() []Sample { return append([]Sample(nil), h.samples...) }

// sampleOf measures one snapshot.
func sampleOf(s view.Snapshot, at time.Time) Sample {
	out := Sample{At: at}
	for _, n := range s.Nodes {
		if !n.Ready {
			continue
		}
		for _, g := range n.GPUs {
			if g.Healthy {
				out.Capacity += resources.MilliPerGPU
				out.Allocated += min(g.Allocated, resources.MilliPerGPU)
			}
		}
	}
	var demands []resources.MilliGPU
	var total time.Duration
	for _, w := range s.Workloads {
		if !waiting(w.Phase) {
			continue
		}
		out.Pending++
		total += w.Waited
		out.MaxWait = max(out.MaxWait, w.Waited)
		if w.Pods > 0 && w.GPU > 0 {
			demands = append(demands, w.GPU/resources.MilliGPU(w.Pods))
		}
	}
	if out.Pending > 0 {
		out.MeanWait = total / time.Duration(out.Pending)
	}
	out.Stranded = stranded(s.Nodes, demands)
	return out
}

// waiting reports whether a workload in phase p waits for admission.
func waiting(p view.Phase) bool { return p == view.Pending || p == view.Evicted }

// stranded is the free GPU capacity on ready nodes that no pending pod fits in, read
// from a snapshot: a pod asking for less than a GPU (its workload's GPU-equivalents per
// pod) fits in a free device at least its size; a pod asking for whole GPUs fits on a
// node with that many free whole GPUs. It approximates the simulator's stranded
// capacity (which knows each pod's exact shape); 0 when nothing with GPUs is pending.
func stranded(nodes []view.Node, demands []resources.MilliGPU) resources.MilliGPU {
	if len(demands) == 0 {
		return 0
	}
	var out resources.MilliGPU
	for _, n := range nodes {
		if !n.Ready {
			continue
		}
		whole := freeWholeGPUs(n)
		for _, g := range n.GPUs {
			if !g.Healthy {
				continue
			}
			for _, d := range g.Devices {
				if d.Holder == "" && !fitsAny(d.Share, whole, demands) {
					out += d.Share
				}
			}
		}
	}
	return out
}

// freeWholeGPUs counts a node's free whole-GPU devices on healthy GPUs (a GPU cut into
// MIG instances or replicas is no whole GPU, even with nothing allocated).
func freeWholeGPUs(n view.Node) int64 {
	var c int64
	for _, g := range n.GPUs {
		for _, d := range g.Devices {
			if g.Healthy && d.Holder == "" && d.Share >= resources.MilliPerGPU {
				c++
			}
		}
	}
	return c
}

// fitsAny reports whether some pending pod fits in a free device of the given share on
// a node with whole free GPUs.
func fitsAny(share resources.MilliGPU, whole int64, demands []resources.MilliGPU) bool {
	for _, d := range demands {
		if d < resources.MilliPerGPU && d <= share {
			return true
		}
		gpus := (int64(d) + int64(resources.MilliPerGPU) - 1) / int64(resources.MilliPerGPU)
		if d >= resources.MilliPerGPU && share >= resources.MilliPerGPU && gpus <= whole {
			return true
		}
	}
	return false
}
