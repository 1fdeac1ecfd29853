package bench

import (
	"fmt"
	"math/rand"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim/report"
	"github.com/gantry-sched/gantry/pkg/sim/trace"
)

// FragPod is one arriving pod of the fragmentation experiment.
type FragPod struct {
	Name string
	// Requests are the pod's requests as the trace gives them (cpu, memory, and
	// nvidia.com/gpu or gantry.dev/gpu-milli), see trace.OpenBWorkload.
	Requests resources.Vector
	// Models are the allowed trace GPU model codes (trace.LabelTraceGPUModel); empty = any.
	Models []string
	// GPU is the request in the common unit, the experiment's measure.
	GPU resources.MilliGPU
}

// FragPodOf converts an openb pod.
func FragPodOf(p trace.OpenBPod) FragPod {
	w := trace.OpenBWorkload(p, "")
	return FragPod{Name: p.Name, Requests: w.PodSets[0].Requests, Models: p.GPUSpec, GPU: p.GPURequest()}
}

// PodPolicy places the pods of one experiment run, one at a time, into the cluster it
// was built over. A pod is placed at once or refused (no retry, no preemption), and placed
// pods never leave. Implementations keep their own cluster state.
type PodPolicy interface {
	Place(p FragPod) (placed bool, err error)
}

// PolicyFactory builds a fresh policy and cluster state for one run. pods is the trace's
// pod list (FGD's target workload: its shape distribution); rng is the run's seeded
// source for random choices and tie-breaking.
type PolicyFactory func(nodes []api.NodePool, pods []FragPod, rng *rand.Rand) (PodPolicy, error)

// NamedPolicy pairs a policy name with its factory (an explicit list, no registry).
type NamedPolicy struct {
	Name string
	New  PolicyFactory
}

// FragConfig is one fragmentation experiment (see /work/shared/traces/README.md).
type FragConfig struct {
	// Variant names the pod list in the runs (e.g. "default" for
	// openb_pod_list_default.csv).
	Variant string
	Nodes   []api.NodePool
	Pods    []FragPod
	// InflatePercent is how much GPU demand arrives, in percent of the cluster's GPUs
	// (130 in the paper).
	InflatePercent int64
	// CurveStepPermille is the curve's resolution in thousandths of cluster capacity
	// (10 = a point every 1%).
	CurveStepPermille int64
	// Progress is told each pod placed (or refused) of a run's arrival sequence.
	Progress Progress
}

// FragPoint is one point of a run's curve: after the arrivals that reached
// ArrivedPermille of cluster capacity, the GPU demand that arrived and was allocated.
// The metrics are read from these integers (see frag_report.go), never from rounded
// values.
type FragPoint struct {
	ArrivedPermille int64              `json:"arrivedPermille"`
	Arrived         resources.MilliGPU `json:"arrived"`
	Allocated       resources.MilliGPU `json:"allocated"`
}

// FragRun is one policy × seed run. Capacity is the cluster's GPUs.
type FragRun struct {
	Variant  string             `json:"variant,omitempty"`
	Policy   string             `json:"policy"`
	Seed     int64              `json:"seed"`
	Capacity resources.MilliGPU `json:"capacity"`
	Pods     int                `json:"pods"`
	Placed   int                `json:"placed"`
	Failed   int                `json:"failed"`
	Curve    []FragPoint        `json:"curve"`
}

// At returns the curve point at the first step at or above permille of capacity (the
// last point when the run never got there).
func (r FragRun) At(permilleOfCapacity int64) FragPoint {
	for _, p := range r.Curve {
		if p.ArrivedPermille >= permilleOfCapacity {
			return p
		}
	}
	if len(r.Curve) == 0 {
		return FragPoint{}
	}
	return r.Curve[len(r.Curve)-1]
}

// FragSequence is the arrival order of one run: the pods shuffled with rng, then pods
// sampled with replacement until the GPU demand reaches inflatePercent of capacity,
// cut at the first pod that reaches it.
func FragSequence(pods []FragPod, capacity resources.MilliGPU, inflatePercent int64, rng *rand.Rand) []FragPod {
	if len(pods) == 0 {
		return nil
	}
	target := int64(capacity) * inflatePercent / 100
	seq := make([]FragPod, len(pods))
	copy(seq, pods)
	rng.Shuffle(len(seq), func(i, j int) { seq[i], seq[j] = seq[j], seq[i] })
	var demand int64
	for i, p := range seq {
		demand += int64(p.GPU)
		if demand >= target {
			return seq[:i+1]
		}
	}
	hasGPU := false
	for _, p := range pods {
		hasGPU = hasGPU || p.GPU > 0
	}
	for hasGPU && demand < target {
		p := pods[rng.Intn(len(pods))]
		seq = append(seq, p)
		demand += int64(p.GPU)
	}
	return seq
}

// RunFragOnce runs one policy over one seed: build the arrival sequence, place the pods
// one by one, and record the curve every CurveStepPermille of capacity.
func RunFragOnce(cfg FragConfig, pol NamedPolicy, seed int64) (FragRun, error) {
	if cfg.InflatePercent <= 0 || cfg.CurveStepPermille <= 0 {
		return FragRun{}, fmt.Errorf("bench frag: inflate percent (%d) and curve step (%d‰) must be positive", cfg.InflatePercent, cfg.CurveStepPermille)
	}
	capacity := trace.ClusterGPUs(cfg.Nodes)
	if capacity == 0 {
		return FragRun{}, fmt.Errorf("bench frag: the node list has no GPUs")
	}
	rng := rand.New(rand.NewSource(seed))
	seq := FragSequence(cfg.Pods, capacity, cfg.InflatePercent, rng)
	// The policy gets its own source derived from the seed, so adding a draw to the
	// sequence logic cannot shift the policy's random choices in unrelated ways.
	policy, err := pol.New(cfg.Nodes, cfg.Pods, rand.New(rand.NewSource(seed^0x5eed)))
	if err != nil {
		return FragRun{}, fmt.Errorf("bench frag: policy %s: %w", pol.Name, err)
	}
	run := FragRun{Variant: cfg.Variant, Policy: pol.Name, Seed: seed, Capacity: capacity, Pods: len(seq)}
	var arrived, allocated resources.MilliGPU
	next := cfg.CurveStepPermille
	for i, p := range seq {
		cfg.Progress.report(i, len(seq))
		ok, err := policy.Place(p)
		if err != nil {
			return FragRun{}, fmt.Errorf("bench frag: policy %s, seed %d, pod %s: %w", pol.Name, seed, p.Name, err)
		}
		arrived += p.GPU
		if ok {
			run.Placed++
			allocated += p.GPU
		} else {
			run.Failed++
		}
		for int64(arrived)*1000 >= next*int64(capacity) {
			run.Curve = append(run.Curve, FragPoint{ArrivedPermille: next, Arrived: arrived, Allocated: allocated})
			next += cfg.CurveStepPermille
		}
	}
	cfg.Progress.report(len(seq), len(seq))
	if last := report.Permille(int64(arrived), int64(capacity)); len(run.Curve) == 0 || run.Curve[len(run.Curve)-1].ArrivedPermille < last {
		run.Curve = append(run.Curve, FragPoint{ArrivedPermille: last, Arrived: arrived, Allocated: allocated})
	}
	return run, nil
}
