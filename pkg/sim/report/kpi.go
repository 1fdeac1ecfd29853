package report

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// Report is the KPI summary of one simulation run (`gantry simulate --output json`, the
// text table and the HTML report). Every quantity is an integer: times in Seconds, GPU
// amounts in milli-GPU, ratios in permille (thousandths). docs/simulator-kpis.md defines
// each field.
type Report struct {
	Start sim.Seconds `json:"start"`
	End   sim.Seconds `json:"end"`
	// Overall aggregates every workload; Queues has one entry per ClusterQueue, by name.
	Overall QueueKPIs   `json:"overall"`
	Queues  []QueueKPIs `json:"queues"`
	// Allocation has one series for the whole cluster ("all") and one per GPU model and
	// sharing mode ("<model>/<mode>"), by key.
	Allocation []AllocationSeries `json:"allocation"`
	// Capacity is sampled with stranded capacity and fragmentation.
	Capacity []CapacityPoint `json:"capacity"`
	// MeanStrandedMilli and MeanFragMilli are time-weighted means of the Capacity series.
	MeanStrandedMilli resources.MilliGPU `json:"meanStrandedMilli"`
	MeanFragMilli     resources.MilliGPU `json:"meanFragMilli"`
	// Preemptions lists every preemption, interruption and eviction in time order.
	Preemptions         []PreemptionPoint `json:"preemptions"`
	LostGPUMilliSeconds int64             `json:"lostGpuMilliSeconds"`
	// QuotaUse has one entry per ClusterQueue, by name.
	QuotaUse []QuotaUse `json:"quotaUse"`
	// Heatmaps are node × GPU allocation pictures at chosen times.
	Heatmaps []Heatmap `json:"heatmaps,omitempty"`
}

// QueueKPIs are the per-queue (or overall) workload statistics.
type QueueKPIs struct {
	Name      string `json:"name"`
	Submitted int    `json:"submitted"`
	Placed    int    `json:"placed"` // workloads placed at least once
	Finished  int    `json:"finished"`
	// StillPending counts workloads never placed by the end (left out of Wait).
	StillPending int `json:"stillPending"`
	Preempted    int `json:"preempted"`
	Interrupted  int `json:"interrupted"`
	Evicted      int `json:"evicted"`
	// Wait is each placed workload's total time waiting in its queue (submission to first
	// placement plus every requeue to the next placement).
	Wait Distribution `json:"wait"`
	// JCT is finish − submit of finished workloads.
	JCT                 Distribution `json:"jct"`
	LostGPUMilliSeconds int64        `json:"lostGpuMilliSeconds"`
}

// Distribution summarises integer durations with exact nearest-rank percentiles.
type Distribution struct {
	Count int         `json:"count"`
	Mean  sim.Seconds `json:"mean"` // integer mean (truncated to the nanosecond)
	P50   sim.Seconds `json:"p50"`
	P95   sim.Seconds `json:"p95"`
	P99   sim.Seconds `json:"p99"`
	Max   sim.Seconds `json:"max"`
	// Values are the sorted samples, kept for CDF charts; not written to JSON.
	Values []time.Duration `json:"-"`
}

// AllocationSeries is allocated / capacity GPU milli over time for one key.
type AllocationSeries struct {
	Key string `json:"key"`
	// MeanPermille is the time-weighted mean of allocated / capacity.
	MeanPermille int64             `json:"meanPermille"`
	Points       []AllocationPoint `json:"points"`
}

// AllocationPoint is one sample of an allocation series (the value holds until the next).
type AllocationPoint struct {
	T         sim.Seconds        `json:"t"`
	Allocated resources.MilliGPU `json:"allocated"`
	Capacity  resources.MilliGPU `json:"capacity"`
}

// CapacityPoint is the free GPU capacity at one sample and how usable it is.
type CapacityPoint struct {
	T    sim.Seconds        `json:"t"`
	Free resources.MilliGPU `json:"free"`
	// FreeWhole is free capacity on GPUs nothing uses (whole GPUs); FreePieces is the rest
	// (shares of partly used GPUs, free MIG instances, free replicas).
	FreeWhole  resources.MilliGPU `json:"freeWhole"`
	FreePieces resources.MilliGPU `json:"freePieces"`
	// Stranded is free capacity that no pending shape can use (0 when nothing is pending).
	Stranded resources.MilliGPU `json:"stranded"`
	// Frag is FGD's expected fragmentation of the free capacity against the workload's
	// shape distribution.
	Frag resources.MilliGPU `json:"frag"`
}

// PreemptionPoint is one preemption, interruption or eviction.
type PreemptionPoint struct {
	T                   sim.Seconds   `json:"t"`
	Event               sim.EventKind `json:"event"`
	Workload            string        `json:"workload"`
	ClusterQueue        string        `json:"clusterQueue,omitempty"`
	LostGPUMilliSeconds int64         `json:"lostGpuMilliSeconds,omitempty"`
}

// QuotaUse is one ClusterQueue's GPU usage against its nominal quota over the run.
type QuotaUse struct {
	ClusterQueue string             `json:"clusterQueue"`
	Nominal      resources.MilliGPU `json:"nominal"` // at the last sample
	MeanUsed     resources.MilliGPU `json:"meanUsed"`
	PeakUsed     resources.MilliGPU `json:"peakUsed"`
	// UtilisationPermille is MeanUsed / Nominal (0 without nominal quota).
	UtilisationPermille int64              `json:"utilisationPermille"`
	MeanBorrowed        resources.MilliGPU `json:"meanBorrowed"`
	PeakBorrowed        resources.MilliGPU `json:"peakBorrowed"`
	// Points is used and borrowed GPU milli over time (only where they change).
	Points []QuotaPoint `json:"points"`
}

// QuotaPoint is one sample of a ClusterQueue's GPU usage.
type QuotaPoint struct {
	T        sim.Seconds        `json:"t"`
	Used     resources.MilliGPU `json:"used"`
	Borrowed resources.MilliGPU `json:"borrowed"`
	Nominal  resources.MilliGPU `json:"nominal"`
}

// Heatmap is every GPU's allocation at one time: Rows are nodes by name, each with its
// GPUs' allocated milli by index.
type Heatmap struct {
	T    sim.Seconds  `json:"t"`
	Rows []HeatmapRow `json:"rows"`
}

// HeatmapRow is one node of a heat map.
type HeatmapRow struct {
	Node string               `json:"node"`
	GPUs []resources.MilliGPU `json:"gpus"`
	// Down marks a node that was not ready (failed, draining, interrupted).
	Down bool `json:"down,omitempty"`
}

// NearestRank returns the p-th percentile (0 < p <= 100) of sorted values by the
// nearest-rank method: the smallest value with at least p% of the values at or below it.
// It returns 0 for no values.
func NearestRank(sorted []time.Duration, p int) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := (p*n + 99) / 100 // ceil(p/100 × n) in integers
	if rank < 1 {
		rank = 1
	}
	if rank > n {
		rank = n
	}
	return sorted[rank-1]
}

// Summarise sorts a copy of values and computes its Distribution.
func Summarise(values []time.Duration) Distribution {
	v := slices.Clone(values)
	slices.Sort(v)
	d := Distribution{Count: len(v), Values: v}
	if len(v) == 0 {
		return d
	}
	var sum time.Duration
	for _, x := range v {
		sum += x
	}
	d.Mean = sim.Seconds(sum / time.Duration(len(v)))
	d.P50 = sim.Seconds(NearestRank(v, 50))
	d.P95 = sim.Seconds(NearestRank(v, 95))
	d.P99 = sim.Seconds(NearestRank(v, 99))
	d.Max = sim.Seconds(v[len(v)-1])
	return d
}

// gpuEquivalentOf converts a ClusterQueue's GPU quota, usage or borrowing (summed over
// flavors) into GPU-equivalents in milli-GPU, the common unit: whole GPUs count 1000
// each and MIG instances their profile's share (migMilli), and gantry.dev/gpu-milli
// stands for the same GPUs once more (admission charges every GPU request of a queue
// that quotas gpu-milli into it as well), so the figure is the larger of the two sums,
// never their total. Shared replicas (nvidia.com/gpu.shared, time-sliced MIG) are worth
// 1000/replicas of a node's GPU, which a queue's vector does not say: they are left out.
func gpuEquivalentOf(v resources.Vector) resources.MilliGPU {
	native := resources.SatMul(v[resources.NvidiaGPU], int64(resources.MilliPerGPU))
	for name, n := range v {
		if m := migMilli(name); m > 0 {
			native = resources.SatAdd(native, resources.SatMul(n, int64(m)))
		}
	}
	return resources.MilliGPU(max(native, v[resources.GPUMilli]))
}

// migMilliCache holds each MIG resource's milli-GPU: samples convert queue vectors
// often and the catalog lookup walks every model.
var migMilliCache sync.Map // resources.Name -> resources.MilliGPU

// migMilli is one device of MIG resource name in milli-GPU (0 for other resources and
// for ".shared" replicas): its profile's compute slices over the GPU's on the first
// catalog model offering it (a profile name fixes its geometry, so every model offering
// it gives the same share), else "<g>g" sevenths as pkg/devices values a profile
// without a model.
func migMilli(name resources.Name) resources.MilliGPU {
	if m, ok := migMilliCache.Load(name); ok {
		return m.(resources.MilliGPU)
	}
	m := lookupMIGMilli(name)
	migMilliCache.Store(name, m)
	return m
}

func lookupMIGMilli(name resources.Name) resources.MilliGPU {
	profile, ok := name.MIGProfile()
	if !ok || strings.HasSuffix(string(name), devices.SharedSuffix) {
		return 0
	}
	return devices.ProfileMilli(profile)
}

// Permille is a*1000/b in integers, 0 when b is 0.
func Permille(a, b int64) int64 {
	if b == 0 {
		return 0
	}
	return a * 1000 / b
}
