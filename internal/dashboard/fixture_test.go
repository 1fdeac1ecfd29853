package dashboard

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/view"
)

// The test cluster of the handler and browser tests, as a hand-made snapshot: two
// cohorts (one nested), three ClusterQueues (one held), pending workloads with reasons,
// running ones, a whole-GPU node, a MIG node, a time-sliced node, a node that is not
// ready and an unhealthy GPU.

func dur(d time.Duration) *time.Duration { return &d }

// wholeGPU is an exclusive GPU held by holder ("" free).
func wholeGPU(node string, i int, holder string) view.GPU {
	g := view.GPU{Index: i, Model: "NVIDIA-H100-80GB-HBM3", Mode: "exclusive", Healthy: true,
		Devices: []view.Device{{ID: fmt.Sprintf("GPU-%s-%d", node, i), Share: 1000, Holder: holder}}}
	if holder != "" {
		g.Allocated = 1000
	}
	return g
}

// migGPU is an H100 in the all-balanced layout: 2 × 1g.10gb, 1 × 2g.20gb, 1 × 3g.40gb.
func migGPU(node string, i int, holders [4]string) view.GPU {
	g := view.GPU{Index: i, Model: "H100-SXM5-80GB", Mode: "mig", Healthy: true}
	profiles := []struct {
		p     string
		share resources.MilliGPU
	}{{"1g.10gb", 142}, {"1g.10gb", 142}, {"2g.20gb", 285}, {"3g.40gb", 428}}
	for k, p := range profiles {
		g.Devices = append(g.Devices, view.Device{ID: fmt.Sprintf("MIG-%s-%d-%d", node, i, k), Profile: p.p, Share: p.share, Holder: holders[k]})
		if holders[k] != "" {
			g.Allocated += p.share
		}
	}
	return g
}

// sharedGPU is a time-sliced GPU with four replicas.
func sharedGPU(node string, i int, holders [4]string) view.GPU {
	g := view.GPU{Index: i, Model: "A100-SXM4-80GB", Mode: "time-slicing", Healthy: true}
	for k, h := range holders {
		g.Devices = append(g.Devices, view.Device{ID: fmt.Sprintf("GPU-%s-%d::%d", node, i, k), Share: 250, Holder: h})
		if h != "" {
			g.Allocated += 250
		}
	}
	return g
}

func testSnapshot() view.Snapshot {
	whole := view.Node{Name: "h100-full-0", Pool: "h100-full", CapacityType: "on-demand", Ready: true}
	for i := 0; i < 8; i++ {
		holder := ""
		if i < 4 {
			holder = "team-a/llm-finetune"
		}
		whole.GPUs = append(whole.GPUs, wholeGPU(whole.Name, i, holder))
	}
	whole.GPUs[7].Healthy = false
	mig := view.Node{Name: "h100-mig-0", Pool: "h100-mig", CapacityType: "on-demand", Ready: true}
	mig.GPUs = []view.GPU{
		migGPU(mig.Name, 0, [4]string{"team-b/notebook-1", "", "team-b/inference", ""}),
		migGPU(mig.Name, 1, [4]string{"", "", "", ""}),
	}
	shared := view.Node{Name: "a100-shared-0", Pool: "a100-shared", CapacityType: "spot", Ready: true}
	shared.GPUs = []view.GPU{sharedGPU(shared.Name, 0, [4]string{"team-b/notebook-2", "team-b/notebook-2", "", ""})}
	down := view.Node{Name: "a100-spot-1", Pool: "a100-shared", CapacityType: "spot", Ready: false,
		GPUs: []view.GPU{wholeGPU("a100-spot-1", 0, ""), wholeGPU("a100-spot-1", 1, "")}}
	return view.Snapshot{
		Source:  "simulation",
		Elapsed: 65 * time.Minute,
		Cohorts: []view.Cohort{{Name: "org"}, {Name: "research-pool", Parent: "org", Queues: []string{"research"}}},
		Queues: []view.Queue{
			{Name: "batch", Cohort: "org", NominalGPU: 8000, UsedGPU: 4000, Pending: 1, Admitted: 1,
				Quota: []view.QuotaRow{{Flavor: "h100", Resource: resources.NvidiaGPU, Nominal: 8, Used: 4}}},
			{Name: "prod", Cohort: "org", NominalGPU: 4000, UsedGPU: 5000, BorrowedGPU: 1000, FairShare: 250, Admitted: 1,
				Quota: []view.QuotaRow{{Flavor: "h100-mig", Resource: "nvidia.com/mig-3g.40gb", Nominal: 4, Used: 1},
					{Flavor: "h100", Resource: resources.Memory, Nominal: 64 << 30, Used: 3 << 29}}},
			{Name: "research", Cohort: "research-pool", Held: true, NominalGPU: 2000, Pending: 2},
		},
		Workloads: []view.Workload{
			{ID: "team-a/llm-pretrain", ClusterQueue: "batch", LocalQueue: "team-a", Priority: 100, Phase: view.Pending, Pods: 4, GPU: 32000,
				Layer: "placement", Reason: "InsufficientGPUs", Details: []string{"h100-full-0: 4 of 8 GPUs free, 8 wanted per pod"},
				Remedy: "wait for team-a/llm-finetune to finish (4 GPUs)", Position: 1, ETA: dur(25 * time.Minute), ETABasis: "running workloads' durations", Waited: 10 * time.Minute},
			{ID: "team-a/llm-finetune", ClusterQueue: "batch", Priority: 50, Phase: view.Running, Pods: 1, GPU: 4000, Nodes: []string{"h100-full-0"}},
			{ID: "team-b/inference", ClusterQueue: "prod", Phase: view.Running, Pods: 1, GPU: 285, Nodes: []string{"h100-mig-0"}},
			{ID: "team-b/notebook-1", ClusterQueue: "prod", Phase: view.Admitted, Pods: 1, GPU: 142, Nodes: []string{"h100-mig-0"}},
			{ID: "research/sweep-1", ClusterQueue: "research", Phase: view.Pending, Pods: 2, GPU: 2000,
				Layer: "admission", Reason: "QueueHeld", Details: []string{"ClusterQueue research has stopPolicy Hold"}, Position: 1, Waited: 5 * time.Minute},
			{ID: "research/sweep-2", ClusterQueue: "research", Phase: view.Evicted, Pods: 1, GPU: 1000,
				Layer: "admission", Reason: "QueueHeld", Position: 2, Waited: time.Minute},
			{ID: "team-b/notebook-2", ClusterQueue: "prod", Phase: view.Finished, Pods: 1, GPU: 500},
		},
		Nodes: []view.Node{shared, down, whole, mig},
	}
}

// fixedStepper is a Stepper over one snapshot that records what it was asked.
type fixedStepper struct {
	snap view.Snapshot
	now  time.Duration
	runs *[]time.Duration
}

func (s *fixedStepper) RunUntil(t time.Duration) error {
	*s.runs = append(*s.runs, t)
	s.now = max(s.now, t)
	return nil
}

func (s *fixedStepper) Now() time.Duration { return s.now }

func (s *fixedStepper) View() view.Snapshot {
	v := s.snap
	v.Elapsed = s.now
	return v
}

// staticSource is a seekable Source that always shows snap, with a fixed chart.
type staticSource struct{ snap view.Snapshot }

func (s staticSource) Snapshot(context.Context, time.Duration) (view.Snapshot, error) {
	return s.snap, nil
}

func (s staticSource) Timeline() Timeline {
	return Timeline{Seekable: true, End: 2*time.Hour + 10*time.Minute, Default: 65 * time.Minute}
}

func (s staticSource) WriteCharts(_ context.Context, w io.Writer) error {
	_, err := io.WriteString(w, `<figure id="chart-test"><figcaption>test chart</figcaption></figure>`)
	return err
}
