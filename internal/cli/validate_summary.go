package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// validateSummary is what `gantry validate` prints (also as JSON with -o json).
type validateSummary struct {
	Counts       map[string]int   `json:"counts"`
	Pools        []poolSummary    `json:"pools"`
	Totals       poolSummary      `json:"totals"`
	Flavors      []flavorSummary  `json:"flavors"`
	Cohorts      []*cohortNode    `json:"cohortTree"`
	Unparented   []queueSummary   `json:"clusterQueuesWithoutCohort,omitempty"`
	LocalQueues  []localQueueRow  `json:"localQueues"`
	Workloads    []queueWorkloads `json:"workloadsByQueue"`
	Events       []eventSummary   `json:"events"`
	NodeWarnings []string         `json:"nodeWarnings,omitempty"`
	// Live is the line on a cluster dump's pods (simulate_live.go), empty without any.
	Live string `json:"clusterDump,omitempty"`
}

// poolSummary is one pool of identical nodes (a NodePool, or Node objects sharing a
// pool label).
type poolSummary struct {
	Name         string `json:"name"`
	Nodes        int    `json:"nodes"`
	Model        string `json:"gpuModel,omitempty"`
	GPUs         int    `json:"gpus"`
	Sharing      string `json:"sharing,omitempty"`
	CapacityType string `json:"capacityType,omitempty"`
	// GPUResources are the device-plugin resources the whole pool advertises.
	GPUResources string `json:"gpuResources,omitempty"`
	// MilliGPU is the pool's GPU compute in Gantry's common unit (1000 = one GPU).
	MilliGPU resources.MilliGPU `json:"milliGPU"`
}

type flavorSummary struct {
	Name       string `json:"name"`
	NodeLabels string `json:"nodeLabels,omitempty"`
	Taints     string `json:"taints,omitempty"`
	Topology   string `json:"topology,omitempty"`
}

// cohortNode is a cohort with its child cohorts and ClusterQueues.
type cohortNode struct {
	Name     string         `json:"name"`
	Quota    []quotaRow     `json:"quota,omitempty"`
	Children []*cohortNode  `json:"children,omitempty"`
	Queues   []queueSummary `json:"clusterQueues,omitempty"`
}

type queueSummary struct {
	Name       string     `json:"name"`
	Strategy   string     `json:"queueingStrategy"`
	Preemption string     `json:"preemption"`
	Weight     string     `json:"fairSharingWeight"`
	Quota      []quotaRow `json:"quota"`
}

// quotaRow is one flavor × resource quota, formatted as users write quantities.
type quotaRow struct {
	Flavor    string `json:"flavor"`
	Resource  string `json:"resource"`
	Nominal   string `json:"nominal"`
	Borrowing string `json:"borrowingLimit"`
	Lending   string `json:"lendingLimit"`
}

type localQueueRow struct {
	Name         string `json:"name"`
	ClusterQueue string `json:"clusterQueue"`
}

type queueWorkloads struct {
	Queue     string             `json:"queue"`
	Workloads int                `json:"workloads"`
	Pods      int64              `json:"pods"`
	MilliGPU  resources.MilliGPU `json:"milliGPU"`
	Kinds     string             `json:"kinds"`
}

type eventSummary struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	At     string `json:"at"`
	Target string `json:"target"`
	Detail string `json:"detail,omitempty"`
}

// summarize builds the summary; the nodes are expanded with the cluster package, as
// the simulator will see them.
func summarize(o *api.Objects) (validateSummary, error) {
	s := validateSummary{Counts: map[string]int{
		"nodePools": len(o.NodePools), "nodes": len(o.Nodes), "flavors": len(o.Flavors),
		"cohorts": len(o.Cohorts), "clusterQueues": len(o.ClusterQueues), "localQueues": len(o.LocalQueues),
		"priorityClasses": len(o.PriorityClasses), "topologies": len(o.Topologies), "namespaces": len(o.Namespaces),
		"workloads": len(o.Workloads), "events": len(o.Events),
	}}
	if live := countLive(o); live != (liveCounts{}) {
		s.Counts["runningPods"], s.Counts["capacityPods"], s.Counts["finishedPods"] = live.Running, live.Capacity, live.Finished
		s.Live, _ = liveLine(o)
	}
	pools, warns, err := summarizePools(o)
	if err != nil {
		return s, err
	}
	s.Pools, s.NodeWarnings = pools, warns
	s.Totals = poolSummary{Name: "total"}
	for _, p := range pools {
		s.Totals.Nodes += p.Nodes
		s.Totals.GPUs += p.GPUs
		s.Totals.MilliGPU += p.MilliGPU
	}
	for _, f := range o.Flavors {
		s.Flavors = append(s.Flavors, flavorSummary{Name: f.Name, NodeLabels: formatMap(f.NodeLabels), Taints: formatTaints(f), Topology: f.TopologyName})
	}
	s.Cohorts, s.Unparented = cohortTree(o)
	for _, q := range o.LocalQueues {
		s.LocalQueues = append(s.LocalQueues, localQueueRow{Name: q.Key(), ClusterQueue: q.ClusterQueue})
	}
	s.Workloads = workloadsByQueue(o.Workloads)
	for _, e := range o.Events {
		s.Events = append(s.Events, summarizeEvent(e))
	}
	return s, nil
}

// summarizePools expands NodePools (one row each) and groups Node objects into rows of
// alike nodes (nodeGroupOf).
func summarizePools(o *api.Objects) ([]poolSummary, []string, error) {
	var out []poolSummary
	var warns []string
	for _, p := range o.NodePools {
		nodes, err := cluster.ExpandPool(p)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, poolOf(p.Name, nodes, sharingText(p.Sharing)))
	}
	groups := map[nodeGroup][]cluster.Node{}
	for _, kn := range o.Nodes {
		n, err := cluster.NodeFromKube(kn)
		if err != nil {
			return nil, nil, err
		}
		if err := cluster.WithSliceDevices(&n, o.SlicesOfNode(n.Name)); err != nil {
			return nil, nil, err
		}
		for _, w := range n.Warnings {
			warns = append(warns, w.String())
		}
		g := nodeGroupOf(n)
		groups[g] = append(groups[g], n)
	}
	for _, g := range sortedNodeGroups(groups) {
		out = append(out, poolOf(g.pool, groups[g], g.sharing))
	}
	return out, warns, nil
}

// nodeGroup is what makes Node objects one row of the summary: the pool label alone
// would put every GPU model and sharing mode of an unlabelled cluster into one row that
// shows one model's name and one mode, so the row also keys on those and on the
// capacity type (a pool of spot and on-demand nodes is two rows too).
type nodeGroup struct {
	pool, model, sharing, capacityType string
}

// nodeGroupOf keys a node by its pool label ("(no pool label)" without one), its GPU
// models and its GPUs' sharing modes (each a sorted list, for nodes that mix them).
func nodeGroupOf(n cluster.Node) nodeGroup {
	g := nodeGroup{pool: n.Pool, capacityType: n.CapacityType}
	if g.pool == "" {
		g.pool = "(no pool label)"
	}
	if n.Devices == nil {
		return g
	}
	models, modes := map[string]bool{}, map[string]bool{}
	for _, gpu := range n.Devices.GPUs() {
		models[string(gpu.Model)] = true
		modes[sharingText(gpu.Sharing)] = true
	}
	g.model = strings.Join(sortedSet(models), ",")
	g.sharing = strings.Join(sortedSet(modes), ",")
	return g
}

// sortedNodeGroups orders the rows by pool, then model, sharing and capacity type.
func sortedNodeGroups(groups map[nodeGroup][]cluster.Node) []nodeGroup {
	keys := make([]nodeGroup, 0, len(groups))
	for g := range groups {
		keys = append(keys, g)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.pool != b.pool {
			return a.pool < b.pool
		}
		if a.model != b.model {
			return a.model < b.model
		}
		if a.sharing != b.sharing {
			return a.sharing < b.sharing
		}
		return a.capacityType < b.capacityType
	})
	return keys
}

// poolOf sums the GPU capacity of a pool's nodes; sharing is the row's sharing mode
// (every node of a row has the same, see nodeGroup), or "" to take the GPUs' own.
func poolOf(name string, nodes []cluster.Node, sharing string) poolSummary {
	p := poolSummary{Name: name, Nodes: len(nodes), Sharing: sharing}
	gpuRes := resources.Vector{}
	models := map[string]bool{}
	dynamic := 0
	for _, n := range nodes {
		p.CapacityType = n.CapacityType
		if n.Devices == nil {
			continue
		}
		gpus := n.Devices.GPUs()
		p.GPUs += len(gpus)
		for _, g := range gpus {
			models[string(g.Model)] = true
			if sharing == "" {
				p.Sharing = sharingText(g.Sharing)
			}
		}
		capy := n.Devices.Capacity()
		p.MilliGPU += resources.MilliGPU(capy[resources.GPUMilli])
		plugin, d := pluginCapacity(gpus, capy)
		dynamic += d
		for k, a := range plugin {
			if k != resources.GPUMilli && k != resources.GPUMemory {
				gpuRes[k] = resources.SatAdd(gpuRes[k], a)
			}
		}
	}
	p.Model = strings.Join(sortedSet(models), ",")
	p.GPUResources = pluginText(gpuRes, dynamic)
	return p
}

// pluginCapacity is what a device plugin advertises of a node's GPUs (capy, their
// capacity), and how many of them have their MIG layout chosen at allocation time.
// Those are left out: their nvidia.com/mig-<profile> capacity counts the instances each
// profile alone could be carved into, alternatives no device plugin advertises, and
// only DRA claims get them.
func pluginCapacity(gpus []devices.GPU, capy resources.Vector) (resources.Vector, int) {
	var fixed []devices.GPU
	for _, g := range gpus {
		if !g.Sharing.DynamicMIG() {
			fixed = append(fixed, g)
		}
	}
	switch dynamic := len(gpus) - len(fixed); {
	case dynamic == 0:
		return capy, 0
	case len(fixed) == 0:
		return nil, dynamic
	default:
		nd, err := devices.NewNodeDevices(fixed)
		if err != nil { // cannot happen: the GPUs made a node already
			return capy, dynamic
		}
		return nd.Capacity(), dynamic
	}
}

// pluginText is the DEVICE-PLUGIN RESOURCES column: the advertised resources, and what
// serves the pool's dynamic GPUs instead.
func pluginText(adv resources.Vector, dynamic int) string {
	switch {
	case dynamic == 0:
		return adv.String()
	case adv.IsZero():
		return "none (all-dynamic: DRA claims only)"
	}
	return fmt.Sprintf("%s (and %d all-dynamic GPUs: DRA claims only)", adv, dynamic)
}

func sharingText(s devices.Sharing) string {
	switch s.EffectiveMode() {
	case devices.MIG:
		return fmt.Sprintf("mig %s (%s)", s.Layout, s.EffectiveMIGStrategy())
	case devices.TimeSlicing, devices.MPS:
		return fmt.Sprintf("%s x%d", s.EffectiveMode(), s.Replicas)
	}
	return string(s.EffectiveMode())
}

// cohortTree arranges cohorts (roots first, by name) with their children and queues.
func cohortTree(o *api.Objects) ([]*cohortNode, []queueSummary) {
	nodes := map[string]*cohortNode{}
	for _, c := range o.Cohorts {
		nodes[c.Name] = &cohortNode{Name: c.Name, Quota: quotaRows(c.ResourceGroups)}
	}
	var roots []*cohortNode
	for _, c := range o.Cohorts {
		if p, ok := nodes[c.Parent]; ok && c.Parent != "" {
			p.Children = append(p.Children, nodes[c.Name])
		} else {
			roots = append(roots, nodes[c.Name])
		}
	}
	var loose []queueSummary
	for _, q := range o.ClusterQueues {
		qs := summarizeQueue(q)
		if n, ok := nodes[q.Cohort]; ok {
			n.Queues = append(n.Queues, qs)
		} else {
			loose = append(loose, qs)
		}
	}
	sort.Slice(roots, func(i, j int) bool { return roots[i].Name < roots[j].Name })
	return roots, loose
}

func summarizeQueue(q api.ClusterQueue) queueSummary {
	p := q.Preemption
	return queueSummary{
		Name: q.Name, Strategy: string(q.QueueingStrategy),
		Preemption: fmt.Sprintf("within=%s reclaim=%s borrowWithin=%s", p.WithinClusterQueue, p.ReclaimWithinCohort, p.BorrowWithinCohort.Policy),
		Weight:     formatMilli(q.FairSharing.WeightMilli),
		Quota:      quotaRows(q.ResourceGroups),
	}
}

func quotaRows(groups []api.ResourceGroup) []quotaRow {
	var out []quotaRow
	for _, g := range groups {
		for _, f := range g.Flavors {
			for _, r := range f.Resources {
				out = append(out, quotaRow{Flavor: f.Name, Resource: string(r.Name), Nominal: resources.Format(r.Name, r.Nominal),
					Borrowing: limitText(r.Name, r.BorrowingLimit), Lending: limitText(r.Name, r.LendingLimit)})
			}
		}
	}
	return out
}

func limitText(n resources.Name, a *resources.Amount) string {
	if a == nil {
		return "-"
	}
	return resources.Format(n, *a)
}

// workloadsByQueue counts workloads, pods and GPU units per LocalQueue.
func workloadsByQueue(ws []api.Workload) []queueWorkloads {
	byQueue := map[string]*queueWorkloads{}
	kinds := map[string]map[string]bool{}
	for i := range ws {
		w := &ws[i]
		key := w.Namespace + "/" + w.Queue
		q, ok := byQueue[key]
		if !ok {
			q = &queueWorkloads{Queue: key}
			byQueue[key], kinds[key] = q, map[string]bool{}
		}
		q.Workloads++
		kinds[key][w.Owner.Kind] = true
		for _, ps := range w.PodSets {
			q.Pods += int64(ps.Count)
			q.MilliGPU += gpuMilli(ps.Requests) * resources.MilliGPU(ps.Count)
		}
	}
	out := make([]queueWorkloads, 0, len(byQueue))
	for _, k := range sortedSet(setOf(byQueue)) {
		q := byQueue[k]
		q.Kinds = strings.Join(sortedSet(kinds[k]), ",")
		out = append(out, *q)
	}
	return out
}

// gpuMilli converts a pod's GPU requests into the common unit: a whole GPU is 1000, a
// MIG instance its share of the compute slices of the first model offering the profile
// (every model with a profile name gives it the same share), gpu-milli itself. Shared
// replicas depend on the node's replica count and are not counted here.
func gpuMilli(req resources.Vector) resources.MilliGPU {
	var total resources.MilliGPU
	for n, a := range req {
		switch {
		case n == resources.NvidiaGPU:
			total += resources.MilliGPU(a) * resources.MilliPerGPU
		case n == resources.GPUMilli:
			total += resources.MilliGPU(a)
		default:
			if p, ok := n.MIGProfile(); ok {
				total += devices.ProfileMilli(p) * resources.MilliGPU(a)
			}
		}
	}
	return total
}

func summarizeEvent(e api.ClusterEvent) eventSummary {
	target := e.Pool
	if target != "" {
		target = "pool " + target
	}
	if len(e.Nodes) > 0 {
		target = strings.TrimSpace(target + " nodes " + strings.Join(e.Nodes, ","))
	}
	if e.ClusterQueue != "" {
		target = "ClusterQueue " + e.ClusterQueue
	}
	if e.AddPool != nil {
		target = fmt.Sprintf("add pool %s (%d nodes)", e.AddPool.Name, e.AddPool.Count)
	}
	var detail []string
	if e.Notice > 0 {
		detail = append(detail, "notice "+e.Notice.String())
	}
	if e.ReturnAfter > 0 {
		detail = append(detail, "returns after "+e.ReturnAfter.String())
	}
	if e.Sharing != nil {
		detail = append(detail, "sharing "+sharingText(*e.Sharing))
	}
	return eventSummary{Name: e.Name, Type: string(e.Type), At: e.At.String(), Target: target, Detail: strings.Join(detail, ", ")}
}

func formatMilli(m int64) string {
	if m%1000 == 0 {
		return fmt.Sprint(m / 1000)
	}
	return fmt.Sprintf("%d.%03d", m/1000, m%1000)
}

func formatMap(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range sortedSet(setOf(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

func formatTaints(f api.ResourceFlavor) string {
	parts := make([]string, 0, len(f.NodeTaints))
	for _, t := range f.NodeTaints {
		parts = append(parts, fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect))
	}
	return strings.Join(parts, ",")
}

func setOf[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
