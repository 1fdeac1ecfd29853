package bench

import (
	"fmt"
	"math/rand"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// ScaleSpec describes a generated fleet for scale experiments: Nodes 8-GPU H100 nodes,
// Queues ClusterQueues spread over Cohorts cohorts (quota split evenly, borrowing allowed
// inside a cohort), and Jobs gangs of 1-32 GPUs submitted over Spread (0: all at t=0),
// each running 10 minutes to 4 hours.
type ScaleSpec struct {
	Nodes   int
	Jobs    int
	Queues  int
	Cohorts int
	Seed    int64
	Spread  time.Duration
	// HeadOrder is the engine's order of visits ("": the default, priority).
	HeadOrder engine.HeadOrder
}

// Validate reports a spec that cannot be generated.
func (s ScaleSpec) Validate() error {
	switch {
	case s.Nodes <= 0:
		return fmt.Errorf("scale: --nodes %d: must be positive", s.Nodes)
	case s.Jobs < 0:
		return fmt.Errorf("scale: --jobs %d: must not be negative", s.Jobs)
	case s.Queues <= 0:
		return fmt.Errorf("scale: --queues %d: must be positive", s.Queues)
	case s.Cohorts <= 0 || s.Cohorts > s.Queues:
		return fmt.Errorf("scale: --cohorts %d: must be between 1 and --queues (%d)", s.Cohorts, s.Queues)
	case s.Spread < 0:
		return fmt.Errorf("scale: --spread %s: must not be negative", s.Spread)
	}
	return nil
}

// A node has 8 GPUs with 24 cores and 256 GiB of memory for each; a job asks for 8 cores
// and 64 GiB per GPU, so GPUs, not CPU or memory, are what runs out.
const (
	scaleGPUsPerNode = 8
	scaleCPUPerGPU   = 24000     // milli-CPU
	scaleMemPerGPU   = 256 << 30 // bytes
)

// Generate builds the object set of a spec; the same spec gives the same objects.
func Generate(s ScaleSpec) (*api.Objects, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewSource(s.Seed))
	o := &api.Objects{
		Flavors: []api.ResourceFlavor{{Meta: api.Meta{Name: "h100"}, NodeLabels: map[string]string{"pool": "h100"}}},
		NodePools: []api.NodePool{{Meta: api.Meta{Name: "h100"}, Count: s.Nodes, GPUModel: "H100", GPUsPerNode: scaleGPUsPerNode,
			CPU: scaleGPUsPerNode * scaleCPUPerGPU, Memory: scaleGPUsPerNode * scaleMemPerGPU, NodeLabels: map[string]string{"pool": "h100"}}},
	}
	total := int64(s.Nodes * scaleGPUsPerNode)
	for q := 0; q < s.Queues; q++ {
		o.ClusterQueues = append(o.ClusterQueues, scaleQueue(q, s, total))
		o.LocalQueues = append(o.LocalQueues, api.LocalQueue{Meta: api.Meta{Name: "lq", Namespace: scaleNamespace(q)},
			ClusterQueue: scaleQueueName(q)})
	}
	for c := 0; c < s.Cohorts; c++ {
		o.Cohorts = append(o.Cohorts, api.Cohort{Meta: api.Meta{Name: fmt.Sprintf("cohort-%d", c)}})
	}
	for j := 0; j < s.Jobs; j++ {
		o.Workloads = append(o.Workloads, scaleJob(j, s, rng))
	}
	return o, nil
}

func scaleQueueName(q int) string { return fmt.Sprintf("cq-%03d", q) }
func scaleNamespace(q int) string { return fmt.Sprintf("team-%03d", q) }

// scaleQueue is ClusterQueue q with an even share of the fleet as nominal quota.
func scaleQueue(q int, s ScaleSpec, total int64) api.ClusterQueue {
	share := total / int64(s.Queues)
	if q < int(total%int64(s.Queues)) {
		share++
	}
	return api.ClusterQueue{
		Meta:             api.Meta{Name: scaleQueueName(q)},
		Cohort:           fmt.Sprintf("cohort-%d", q%s.Cohorts),
		QueueingStrategy: api.BestEffortFIFO,
		ResourceGroups: []api.ResourceGroup{{CoveredResources: []resources.Name{resources.CPU, resources.Memory, resources.NvidiaGPU},
			Flavors: []api.FlavorQuotas{{Name: "h100", Resources: []api.ResourceQuota{
				{Name: resources.CPU, Nominal: resources.Amount(share * scaleCPUPerGPU)},
				{Name: resources.Memory, Nominal: resources.Amount(share * scaleMemPerGPU)},
				{Name: resources.NvidiaGPU, Nominal: resources.Amount(share)}}}}}},
		Preemption:        api.Preemption{WithinClusterQueue: api.PreemptNever, ReclaimWithinCohort: api.PreemptNever},
		FlavorFungibility: api.FlavorFungibility{WhenCanBorrow: api.MayStopSearch, WhenCanPreempt: api.TryNextFlavor},
	}
}

// scaleJob is job j: 1, 2, 4 or 8 GPUs in one pod, or 2-4 pods of 8 GPUs (16-32).
func scaleJob(j int, s ScaleSpec, rng *rand.Rand) api.Workload {
	pods, per := int32(1), int64(1)<<rng.Intn(4)
	if rng.Intn(5) == 0 {
		pods, per = int32(2+rng.Intn(3)), scaleGPUsPerNode
	}
	q := rng.Intn(s.Queues)
	var submit time.Duration
	if s.Spread > 0 {
		submit = time.Duration(rng.Int63n(int64(s.Spread)))
	}
	dur := 10*time.Minute + time.Duration(rng.Int63n(int64(230*time.Minute)))
	return api.Workload{
		Meta:     api.Meta{Name: fmt.Sprintf("job-%06d", j), Namespace: scaleNamespace(q)},
		Queue:    "lq",
		Priority: int32(rng.Intn(3)),
		PodSets: []api.PodSet{{Name: "main", Count: pods,
			Requests: resources.Vector{resources.NvidiaGPU: resources.Amount(per),
				resources.CPU: resources.Amount(per * 8000), resources.Memory: resources.Amount(per * (64 << 30))}}},
		Timing: api.Timing{SubmitAt: submit, Duration: dur.Round(time.Second)},
	}
}
