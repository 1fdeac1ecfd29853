package trace

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// Names Gantry gives the objects it makes from a Philly trace.
const (
	// PhillyNamespace holds every Philly job; each virtual cluster is a LocalQueue there.
	PhillyNamespace = "philly"
	// PhillyCohort joins the virtual clusters' ClusterQueues so idle quota can be borrowed.
	PhillyCohort = "philly"
	// PhillyFlavor is the one ResourceFlavor (all nodes are alike).
	PhillyFlavor = "philly"
	// PhillyPool is the NodePool of all the virtual clusters' nodes.
	PhillyPool = "philly"
)

// phillyTimeLayout is how philly.csv writes submission times (UTC).
const phillyTimeLayout = "2006-01-02 15:04:05"

// PhillyJob is one row of philly.csv (`timestamp,duration,num_gpus,gpu_time,cluster`).
type PhillyJob struct {
	Submit   time.Time
	Duration time.Duration
	GPUs     int
	GPUTime  time.Duration
	VC       string // the virtual cluster (team queue)
	Line     int
}

// PhillyVC is one row of philly_vc.csv (`vc,node num`): a virtual cluster's node share.
type PhillyVC struct {
	Name  string
	Nodes int
	Line  int
}

// ReadPhillyJobs parses philly.csv. file names the input in errors.
func ReadPhillyJobs(r io.Reader, file string) ([]PhillyJob, error) {
	t, err := openCSV(r, file, []string{"timestamp", "duration", "num_gpus", "cluster"}, []string{"gpu_time"}, false)
	if err != nil {
		return nil, err
	}
	var out []PhillyJob
	for t.next() {
		if strings.HasPrefix(t.str("duration"), "-") {
			// Caught here too: the decimal reader takes "-0.5" for half a second.
			t.fail("duration", fmt.Sprintf("%q is negative: want the job's run time in seconds", t.str("duration")))
			continue
		}
		j := PhillyJob{
			Duration: t.seconds("duration"),
			GPUs:     int(t.integer("num_gpus", 1, maxTraceGPUs)),
			VC:       t.str("cluster"),
			Line:     t.line(),
		}
		ts, err := time.Parse(phillyTimeLayout, t.str("timestamp"))
		if err != nil {
			t.fail("timestamp", fmt.Sprintf("%q is not a time like \"2017-10-09 07:01:55\"", t.str("timestamp")))
		}
		j.Submit = ts
		if t.str("gpu_time") != "" {
			j.GPUTime = t.seconds("gpu_time")
		}
		if j.VC == "" {
			t.fail("cluster", "empty virtual cluster")
		}
		out = append(out, j)
	}
	return out, t.err()
}

// ReadPhillyVCs parses philly_vc.csv.
func ReadPhillyVCs(r io.Reader, file string) ([]PhillyVC, error) {
	t, err := openCSV(r, file, []string{"vc", "node num"}, nil, false)
	if err != nil {
		return nil, err
	}
	var out []PhillyVC
	seen := map[string]int{}
	for t.next() {
		v := PhillyVC{Name: t.str("vc"), Nodes: int(t.integer("node num", 0, 1<<20)), Line: t.line()}
		switch {
		case v.Name == "":
			t.fail("vc", "empty virtual cluster name")
		case seen[v.Name] != 0:
			t.fail("vc", fmt.Sprintf("virtual cluster %q already defined on line %d", v.Name, seen[v.Name]))
		}
		seen[v.Name] = v.Line
		out = append(out, v)
	}
	return out, t.err()
}

// PhillyOptions select and shape the replay.
type PhillyOptions struct {
	// From and To bound submission times: From ≤ submit < To. Zero values leave that side
	// open. Submit times become offsets from From (or from the first kept job).
	From, To time.Time
	// GPUsPerNode is 8 unless set.
	GPUsPerNode int
	// GPUModel of the nodes (Philly had several; JCT only depends on GPU counts). "P100"
	// unless set.
	GPUModel string
	// File names the jobs file in the workloads' sources.
	File string
	// NodePercent scales every VC's node share (at least one node each), to study a
	// smaller or larger cluster under the same jobs; 100 unless set.
	NodePercent int
	// Nodes, when positive, is the cluster's whole node count instead: it is split over
	// the VCs in proportion to their shares (largest remainders, at least one node
	// each), so a loaded cluster can be sized exactly. NodePercent is then ignored.
	Nodes int
}

func (o PhillyOptions) withDefaults() PhillyOptions {
	if o.GPUsPerNode == 0 {
		o.GPUsPerNode = 8
	}
	if o.GPUModel == "" {
		o.GPUModel = "P100"
	}
	if o.NodePercent == 0 {
		o.NodePercent = 100
	}
	return o
}

// PhillyImport is the result of ImportPhilly: the objects, the time zero of the
// simulation, and how many jobs were left out and why (never silently).
type PhillyImport struct {
	Objects *api.Objects
	Start   time.Time
	Skipped map[string]int
	// UnknownVCs counts the jobs skipped as SkipUnknownVC by virtual cluster, so the
	// skip can be checked against the VC file.
	UnknownVCs map[string]int
}

// Skip reasons of ImportPhilly.
const (
	SkipOutsideWindow = "submitted outside --from/--to"
	SkipUnknownVC     = "virtual cluster has no quota in the VC file"
	SkipZeroDuration  = "zero duration"
)

// ImportPhilly turns jobs and VC shares into Gantry objects: one node pool with every
// VC's nodes, one cohort, and per VC a ClusterQueue ("vc-<name>") whose nominal quota is
// its node share × GPUsPerNode nvidia.com/gpu, plus a LocalQueue named after the VC. A job
// of up to one node's GPUs is one pod; a larger job is a gang of equal pods
// (phillyPodShape).
func ImportPhilly(jobs []PhillyJob, vcs []PhillyVC, o PhillyOptions) (*PhillyImport, error) {
	o = o.withDefaults()
	if _, err := devices.LookupModel(o.GPUModel); err != nil {
		return nil, fmt.Errorf("philly import: GPU model: %v", err)
	}
	if len(vcs) == 0 {
		return nil, fmt.Errorf("philly import: the VC file lists no virtual clusters")
	}
	objs := &api.Objects{Namespaces: []api.Namespace{{Meta: api.Meta{Name: PhillyNamespace}}}}
	objs.Flavors = []api.ResourceFlavor{{Meta: api.Meta{Name: PhillyFlavor}}}
	objs.Cohorts = []api.Cohort{{Meta: api.Meta{Name: PhillyCohort}}}
	quota := map[string]bool{}
	nodes := 0
	shares, err := phillyNodeShares(vcs, o)
	if err != nil {
		return nil, err
	}
	for i, vc := range vcs {
		quota[vc.Name] = true
		n := shares[i]
		nodes += n
		gpus := resources.Amount(n * o.GPUsPerNode)
		objs.ClusterQueues = append(objs.ClusterQueues, api.ClusterQueue{
			Meta:             api.Meta{Name: "vc-" + vc.Name},
			Cohort:           PhillyCohort,
			QueueingStrategy: api.BestEffortFIFO,
			StopPolicy:       api.StopNone,
			Preemption:       phillyPreemption(),
			ResourceGroups: []api.ResourceGroup{{
				CoveredResources: []resources.Name{resources.NvidiaGPU},
				Flavors: []api.FlavorQuotas{{Name: PhillyFlavor, Resources: []api.ResourceQuota{
					{Name: resources.NvidiaGPU, Nominal: gpus},
				}}},
			}},
		})
		objs.LocalQueues = append(objs.LocalQueues, api.LocalQueue{
			Meta: api.Meta{Name: vc.Name, Namespace: PhillyNamespace}, ClusterQueue: "vc-" + vc.Name,
		})
	}
	objs.NodePools = []api.NodePool{{
		Meta: api.Meta{Name: PhillyPool}, Count: nodes, GPUModel: o.GPUModel, GPUsPerNode: o.GPUsPerNode,
		Sharing: devices.Sharing{Mode: devices.Exclusive}, CPU: 64_000, Memory: 512 << 30,
		CapacityType: api.CapacityOnDemand,
	}}
	imp := &PhillyImport{Objects: objs, Skipped: map[string]int{}, UnknownVCs: map[string]int{}}
	kept := selectPhillyJobs(jobs, quota, o, imp)
	if len(kept) > 0 {
		imp.Start = kept[0].Submit
		if !o.From.IsZero() {
			imp.Start = o.From
		}
	}
	for _, j := range kept {
		objs.Workloads = append(objs.Workloads, phillyWorkload(j, imp.Start, o))
	}
	return imp, nil
}

// phillyNodeShares is each VC's node count: its share scaled by NodePercent, or its
// part of Nodes by largest remainders; at least one node each.
func phillyNodeShares(vcs []PhillyVC, o PhillyOptions) ([]int, error) {
	if o.NodePercent < 0 {
		return nil, fmt.Errorf("philly import: node percent %d: must be positive", o.NodePercent)
	}
	out := make([]int, len(vcs))
	if o.Nodes <= 0 {
		for i, vc := range vcs {
			out[i] = max(vc.Nodes*o.NodePercent/100, 1)
		}
		return out, nil
	}
	if o.Nodes < len(vcs) {
		return nil, fmt.Errorf("philly import: %d nodes: fewer than the %d virtual clusters (each needs one)", o.Nodes, len(vcs))
	}
	total := 0
	for _, vc := range vcs {
		total += vc.Nodes
	}
	if total == 0 {
		return nil, fmt.Errorf("philly import: the VC file gives every virtual cluster 0 nodes: no shares to split %d nodes by", o.Nodes)
	}
	return largestRemainders(vcs, total, o.Nodes), nil
}

// largestRemainders splits n nodes over the VCs in proportion to their node counts
// (summing to total): the floor of each share, then one more node to the largest
// remainders (ties to the earlier line of the VC file), then a node for every VC left
// without one, taken from the VC with the most (n is at least the number of VCs).
func largestRemainders(vcs []PhillyVC, total, n int) []int {
	out := make([]int, len(vcs))
	rems := make([]int, len(vcs))
	given := 0
	for i, vc := range vcs {
		out[i], rems[i] = vc.Nodes*n/total, vc.Nodes*n%total
		given += out[i]
	}
	order := make([]int, len(vcs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rems[b], rems[a]) })
	for _, i := range order[:n-given] {
		out[i]++
	}
	for i := range out {
		if out[i] == 0 {
			out[slices.Index(out, slices.Max(out))]--
			out[i] = 1
		}
	}
	return out
}

// phillyPreemption is Kueue's default, as the manifest loader fills it in: no
// preemption. Left empty, placement would read the within-queue policy as LowerPriority
// and search for victims on the nodes for every gang that does not fit, only to find
// none among equal priorities (half the CPU of a loaded replay).
func phillyPreemption() api.Preemption {
	return api.Preemption{WithinClusterQueue: api.PreemptNever, ReclaimWithinCohort: api.PreemptNever,
		BorrowWithinCohort: api.BorrowWithinCohort{Policy: api.PreemptNever}}
}

// selectPhillyJobs keeps the jobs that can be replayed, ordered by submission time then
// line, counting the others by reason.
func selectPhillyJobs(jobs []PhillyJob, quota map[string]bool, o PhillyOptions, imp *PhillyImport) []PhillyJob {
	var kept []PhillyJob
	skipped := imp.Skipped
	for _, j := range jobs {
		switch {
		case !o.From.IsZero() && j.Submit.Before(o.From), !o.To.IsZero() && !j.Submit.Before(o.To):
			skipped[SkipOutsideWindow]++
		case !quota[j.VC]:
			skipped[SkipUnknownVC]++
			imp.UnknownVCs[j.VC]++
		case j.Duration <= 0:
			skipped[SkipZeroDuration]++
		default:
			kept = append(kept, j)
		}
	}
	slices.SortStableFunc(kept, func(a, b PhillyJob) int {
		return cmp.Or(a.Submit.Compare(b.Submit), cmp.Compare(a.Line, b.Line))
	})
	return kept
}

// phillyPodShape splits a job's GPUs into equal pods of at most a node's GPUs: one pod
// when it fits a node, else pods of the largest divisor of gpus that does (16 -> 2 x 8,
// 12 -> 2 x 6, 11 -> 11 x 1), so every job of the trace is replayed.
func phillyPodShape(gpus, perNode int) (pods, per int) {
	per = min(gpus, perNode)
	for gpus%per != 0 {
		per--
	}
	return gpus / per, per
}

// phillyWorkload makes the workload of one job, named after its line in the file.
func phillyWorkload(j PhillyJob, start time.Time, o PhillyOptions) api.Workload {
	pods, per := phillyPodShape(j.GPUs, o.GPUsPerNode)
	name := fmt.Sprintf("job-%06d", j.Line)
	return api.Workload{
		Meta: api.Meta{
			Name: name, Namespace: PhillyNamespace,
			Created: sim.Epoch().Add(j.Submit.Sub(start)), Source: api.Source{File: o.File, Line: j.Line},
		},
		Owner: api.OwnerRef{APIVersion: "batch/v1", Kind: "Job", Name: name},
		Queue: j.VC,
		PodSets: []api.PodSet{{
			Name: "main", Count: int32(pods),
			Requests: resources.Vector{resources.NvidiaGPU: resources.Amount(per)},
		}},
		Timing: api.Timing{SubmitAt: j.Submit.Sub(start), Duration: j.Duration},
	}
}
