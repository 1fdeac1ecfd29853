package trace

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
	corev1 "k8s.io/api/core/v1"
)

// Names Gantry gives the objects it makes from an openb trace.
const (
	// OpenBNamespace holds every workload of an openb pod list.
	OpenBNamespace = "openb"
	// OpenBQueue is the LocalQueue, ClusterQueue and ResourceFlavor name of an openb import.
	OpenBQueue = "openb"
	// LabelTraceGPUModel carries a node's GPU model as the trace writes it ("G2", "V100M16"),
	// so pods' gpu_spec constraints match the trace exactly even where Gantry maps the model
	// to a different catalogue entry.
	LabelTraceGPUModel = "gantry.dev/trace-gpu-model"
)

// OpenBNode is one row of an openb node list (`sn,cpu_milli,memory_mib,gpu,model`).
type OpenBNode struct {
	Name   string
	CPU    resources.Amount // milli-CPU
	Memory resources.Amount // bytes
	GPUs   int
	Model  string // the trace's model code; "" for CPU-only nodes
	Line   int
}

// OpenBPod is one row of an openb pod list. The multigpu variants have only the first
// five columns; HasTimes is false for them.
type OpenBPod struct {
	Name     string
	CPU      resources.Amount // milli-CPU
	Memory   resources.Amount // bytes
	NumGPU   int
	GPUMilli resources.MilliGPU // share of each GPU; 1000 for whole GPUs
	GPUSpec  []string           // allowed trace model codes, sorted, deduplicated; empty = any
	QoS      string
	Phase    string
	HasTimes bool
	Creation time.Duration // offset from the trace start
	// Ran is set when the trace gives both scheduled_time and deletion_time (pending pods
	// have neither); Scheduled and Deletion are meaningful only then.
	Ran       bool
	Scheduled time.Duration
	Deletion  time.Duration
	Line      int
}

// GPURequest is the pod's GPU demand in the common unit: NumGPU × 1000, or GPUMilli for a
// pod that shares one GPU.
func (p OpenBPod) GPURequest() resources.MilliGPU {
	if p.Fractional() {
		return p.GPUMilli
	}
	return resources.MilliGPU(p.NumGPU) * resources.MilliPerGPU
}

// Fractional reports whether the pod asks for a share of one GPU.
func (p OpenBPod) Fractional() bool {
	return p.NumGPU == 1 && p.GPUMilli > 0 && p.GPUMilli < resources.MilliPerGPU
}

// The columns of the openb files (functions, not variables, so nothing can change them).
func openBNodeColumns() []string { return []string{"sn", "cpu_milli", "memory_mib", "gpu", "model"} }

func openBPodRequired() []string {
	return []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}
}

// openBPodOptional are absent from the multigpu variants.
func openBPodOptional() []string {
	return []string{"gpu_spec", "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time"}
}

// maxTraceGPUs bounds GPUs per node or pod: larger values are typos, not hardware.
const maxTraceGPUs = 1024

// ReadOpenBNodes parses an openb node list. file names the input in errors.
func ReadOpenBNodes(r io.Reader, file string) ([]OpenBNode, error) {
	t, err := openCSV(r, file, openBNodeColumns(), nil, false)
	if err != nil {
		return nil, err
	}
	var out []OpenBNode
	seen := map[string]int{}
	for t.next() {
		n := OpenBNode{
			Name:   t.str("sn"),
			CPU:    resources.Amount(t.integer("cpu_milli", 0, 1<<40)),
			Memory: resources.Amount(t.integer("memory_mib", 0, 1<<40)) << 20,
			GPUs:   int(t.integer("gpu", 0, maxTraceGPUs)),
			Model:  t.str("model"),
			Line:   t.line(),
		}
		switch {
		case n.Name == "":
			t.fail("sn", "empty node name")
		case seen[n.Name] != 0:
			t.fail("sn", fmt.Sprintf("node %q already defined on line %d", n.Name, seen[n.Name]))
		}
		if n.GPUs > 0 && n.Model == "" {
			t.fail("model", fmt.Sprintf("node %q has %d GPUs but no model", n.Name, n.GPUs))
		}
		seen[n.Name] = n.Line
		out = append(out, n)
	}
	return out, t.err()
}

// ReadOpenBPods parses an openb pod list (any variant). file names the input in errors.
func ReadOpenBPods(r io.Reader, file string) ([]OpenBPod, error) {
	t, err := openCSV(r, file, openBPodRequired(), openBPodOptional(), false)
	if err != nil {
		return nil, err
	}
	hasTimes := t.has("creation_time")
	var out []OpenBPod
	for t.next() {
		p := OpenBPod{
			Name:     t.str("name"),
			CPU:      resources.Amount(t.integer("cpu_milli", 0, 1<<40)),
			Memory:   resources.Amount(t.integer("memory_mib", 0, 1<<40)) << 20,
			NumGPU:   int(t.integer("num_gpu", 0, maxTraceGPUs)),
			GPUMilli: resources.MilliGPU(t.integer("gpu_milli", 0, int64(resources.MilliPerGPU))),
			GPUSpec:  splitSpec(t.str("gpu_spec")),
			QoS:      t.str("qos"),
			Phase:    t.str("pod_phase"),
			HasTimes: hasTimes,
			Line:     t.line(),
		}
		if p.Name == "" {
			t.fail("name", "empty pod name")
		}
		if p.NumGPU > 0 && p.GPUMilli == 0 {
			t.fail("gpu_milli", fmt.Sprintf("pod %q asks for %d GPUs with gpu_milli 0", p.Name, p.NumGPU))
		}
		// A share without a GPU count would silently drop GPU demand from the experiment.
		if p.NumGPU == 0 && p.GPUMilli > 0 {
			t.fail("gpu_milli", fmt.Sprintf("pod %q asks for gpu_milli %d with num_gpu 0", p.Name, p.GPUMilli))
		}
		if p.NumGPU == 0 && len(p.GPUSpec) > 0 {
			t.fail("gpu_spec", fmt.Sprintf("pod %q names GPU models %v but asks for no GPU", p.Name, p.GPUSpec))
		}
		if p.NumGPU > 1 && p.GPUMilli != resources.MilliPerGPU {
			t.fail("gpu_milli", fmt.Sprintf("pod %q asks for %d GPUs: gpu_milli must be 1000 (shares apply to one GPU only)", p.Name, p.NumGPU))
		}
		if hasTimes {
			p.Creation = t.seconds("creation_time")
			if t.str("scheduled_time") != "" && t.str("deletion_time") != "" {
				p.Ran = true
				p.Scheduled = t.seconds("scheduled_time")
				p.Deletion = t.seconds("deletion_time")
				if p.Deletion < p.Scheduled {
					t.fail("deletion_time", fmt.Sprintf("pod %q is deleted (%v) before it is scheduled (%v)", p.Name, p.Deletion, p.Scheduled))
				}
			}
		}
		out = append(out, p)
	}
	return out, t.err()
}

// splitSpec turns "V100M16|V100M32|V100M32" into a sorted, deduplicated list.
func splitSpec(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, m := range strings.Split(s, "|") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// OpenBGPUModel maps an openb model code to a name devices.LookupModel accepts: the
// catalogue knows every code of the published trace (G2, G3, T4, P100, V100M16, V100M32,
// A10); an unknown code falls back to fallback so a new trace still runs with the right
// GPU count. The trace's own code stays on the node as LabelTraceGPUModel.
func OpenBGPUModel(code, fallback string) string {
	if _, err := devices.LookupModel(code); err == nil {
		return code
	}
	return fallback
}

// OpenBOptions tune the conversion of an openb trace into Gantry objects.
type OpenBOptions struct {
	// FallbackModel is used for GPU models the device catalogue does not know (see
	// OpenBGPUModel). Default "T4".
	FallbackModel string
	// MaxPods per node; default 256.
	MaxPods int64
}

func (o OpenBOptions) withDefaults() OpenBOptions {
	if o.FallbackModel == "" {
		o.FallbackModel = "T4"
	}
	if o.MaxPods == 0 {
		o.MaxPods = 256
	}
	return o
}

// OpenBNodePools makes one single-node pool per openb node, keeping its name. GPUs are
// shared by fraction (the trace's gpu_milli), so pools use devices.Fractional sharing.
func OpenBNodePools(nodes []OpenBNode, file string, o OpenBOptions) []api.NodePool {
	o = o.withDefaults()
	out := make([]api.NodePool, 0, len(nodes))
	for _, n := range nodes {
		p := api.NodePool{
			Meta: api.Meta{
				Name:   n.Name,
				Source: api.Source{File: file, Line: n.Line},
			},
			Count:        1,
			CPU:          n.CPU,
			Memory:       n.Memory,
			MaxPods:      o.MaxPods,
			CapacityType: api.CapacityOnDemand,
			NodeLabels:   map[string]string{},
		}
		if n.GPUs > 0 {
			p.GPUModel = OpenBGPUModel(n.Model, o.FallbackModel)
			p.GPUsPerNode = n.GPUs
			p.Sharing = devices.Sharing{Mode: devices.Fractional}
			p.NodeLabels[LabelTraceGPUModel] = n.Model
		}
		out = append(out, p)
	}
	return out
}

// OpenBWorkload turns one pod into a one-pod workload in OpenBNamespace/OpenBQueue. A pod
// that shares a GPU asks for gantry.dev/gpu-milli; a pod with whole GPUs asks for
// nvidia.com/gpu; gpu_spec becomes required node affinity on LabelTraceGPUModel. The
// trace times become the workload's timing: submitted at creation_time, running for
// deletion_time − scheduled_time when both are known (else until the end).
func OpenBWorkload(p OpenBPod, file string) api.Workload {
	req := resources.Vector{resources.CPU: p.CPU, resources.Memory: p.Memory}
	switch {
	case p.Fractional():
		req[resources.GPUMilli] = resources.Amount(p.GPUMilli)
	case p.NumGPU > 0:
		req[resources.NvidiaGPU] = resources.Amount(p.NumGPU)
	}
	ps := api.PodSet{Name: "main", Count: 1, Requests: req}
	if len(p.GPUSpec) > 0 {
		ps.Affinity = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key:      LabelTraceGPUModel,
				Operator: corev1.NodeSelectorOpIn,
				Values:   slices.Clone(p.GPUSpec),
			}},
		}}}
	}
	w := api.Workload{
		Meta: api.Meta{
			Name:      p.Name,
			Namespace: OpenBNamespace,
			Source:    api.Source{File: file, Line: p.Line},
		},
		Owner:   api.OwnerRef{APIVersion: "v1", Kind: "Pod", Name: p.Name},
		Queue:   OpenBQueue,
		PodSets: []api.PodSet{ps},
	}
	if p.HasTimes {
		w.Timing.SubmitAt = p.Creation
		// Created orders equal-priority workloads (FIFO); the simulator's clock starts at Epoch.
		w.Created = sim.Epoch().Add(p.Creation)
		if p.Ran && p.Deletion > p.Scheduled {
			w.Timing.Duration = p.Deletion - p.Scheduled
		}
	}
	return w
}

// ImportOpenB reads an openb node list and pod list into Gantry objects: one pool per
// node, one workload per pod, and one flavor, ClusterQueue and LocalQueue whose nominal
// quota is the whole cluster (the trace has no quotas; the experiment is about placement).
func ImportOpenB(nodesR io.Reader, nodesFile string, podsR io.Reader, podsFile string, o OpenBOptions) (*api.Objects, error) {
	nodes, err := ReadOpenBNodes(nodesR, nodesFile)
	if err != nil {
		return nil, err
	}
	pods, err := ReadOpenBPods(podsR, podsFile)
	if err != nil {
		return nil, err
	}
	objs := &api.Objects{NodePools: OpenBNodePools(nodes, nodesFile, o)}
	for _, p := range pods {
		objs.Workloads = append(objs.Workloads, OpenBWorkload(p, podsFile))
	}
	addSingleQueue(objs, OpenBNamespace, OpenBQueue, clusterCapacity(objs.NodePools))
	return objs, nil
}

// clusterCapacity sums the pools' CPU, memory and GPUs (whole and milli).
func clusterCapacity(pools []api.NodePool) resources.Vector {
	total := resources.Vector{}
	for _, p := range pools {
		n := int64(p.Count)
		total.AddInPlace(resources.Vector{
			resources.CPU:       resources.SatMul(p.CPU, n),
			resources.Memory:    resources.SatMul(p.Memory, n),
			resources.NvidiaGPU: resources.Amount(int64(p.GPUsPerNode) * n),
			resources.GPUMilli:  resources.Amount(int64(p.GPUsPerNode) * n * int64(resources.MilliPerGPU)),
		})
	}
	return total
}

// addSingleQueue adds a namespace, a flavor, a ClusterQueue with nominal quota and a
// LocalQueue, all named name.
func addSingleQueue(objs *api.Objects, ns, name string, nominal resources.Vector) {
	objs.Namespaces = append(objs.Namespaces, api.Namespace{Meta: api.Meta{Name: ns}})
	objs.Flavors = append(objs.Flavors, api.ResourceFlavor{Meta: api.Meta{Name: name}})
	fq := api.FlavorQuotas{Name: name}
	for _, r := range nominal.Names() {
		fq.Resources = append(fq.Resources, api.ResourceQuota{Name: r, Nominal: nominal[r]})
	}
	objs.ClusterQueues = append(objs.ClusterQueues, api.ClusterQueue{
		Meta:             api.Meta{Name: name},
		QueueingStrategy: api.BestEffortFIFO,
		ResourceGroups:   []api.ResourceGroup{{CoveredResources: nominal.Names(), Flavors: []api.FlavorQuotas{fq}}},
		StopPolicy:       api.StopNone,
	})
	objs.LocalQueues = append(objs.LocalQueues, api.LocalQueue{
		Meta:         api.Meta{Name: name, Namespace: ns},
		ClusterQueue: name,
	})
}
