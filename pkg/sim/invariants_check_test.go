package sim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// invariantChecker watches a simulation as an Observer: it checks every invariant on the
// simulator's model after each settled instant (OnSample) and the quota at each
// admission (OnEvent), and keeps the first violation.
type invariantChecker struct {
	s       *Simulator
	tally   map[string]*eventTally
	records int // event records seen
	// tainted are the quota trees (see treeOf) whose quota a QuotaChange changed: their
	// admitted workloads may stay above a lowered quota, so their limits are checked at
	// admissions only, until a sample finds the whole tree within its limits again
	// (from then on admissions alone cannot take it above them).
	tainted map[string]bool
	models  map[devices.ModelID]devices.Model
	// frs and members are the flavor-resources with quota and the quota trees' members,
	// read once per sample.
	frs     []admission.FlavorResource
	members map[string][]string
	// logSeen is how much of the log has been read; logAdmitted and logFinished count
	// its admitted and finished records so far.
	logSeen, logAdmitted, logFinished int
	samples                           int
	err                               error
}

// eventTally counts one workload's records by kind.
type eventTally struct{ submitted, admitted, placed, evicted, requeued, finished int }

func newInvariantChecker() *invariantChecker {
	return &invariantChecker{tally: map[string]*eventTally{}, tainted: map[string]bool{}, models: map[devices.ModelID]devices.Model{}}
}

func (c *invariantChecker) observer() Observer {
	return ObserverFuncs{Event: c.onEvent, Sample: c.onSample}
}

// fail keeps the first violation, stamped with the simulated time.
func (c *invariantChecker) fail(err error) {
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("at %s: %w", c.s.now, err)
	}
}

func (c *invariantChecker) onEvent(r EventRecord) {
	c.records++
	if r.Workload != "" {
		c.count(r)
	}
	switch r.Event {
	case EvQuota:
		c.tainted[treeOf(c.s.cqs[r.ClusterQueue])] = true
	case EvAdmitted:
		if c.err == nil {
			c.fail(c.checkAdmission(api.WorkloadID(r.Workload)))
		}
	case EvRejected, EvReserved:
		if c.err == nil {
			c.fail(c.checkDecision(r))
		}
	}
}

// checkDecision runs at every rejection and reservation the committer logs: the plan
// decided on a workload the scheduler holds as pending, and the model agrees it is
// pending. A plan that rejects or reserves for a running or noticed workload, or one
// the model refuses to commit (CommitConflict: a device already in use, quota moved,
// or the workload not pending), shows the scheduler's state apart from the cluster's:
// it would admit a workload twice or hand out a device that is taken (the model's
// committer refuses both, so the checks of the model alone would not see them).
func (c *invariantChecker) checkDecision(r EventRecord) error {
	st := c.s.wls[api.WorkloadID(r.Workload)]
	switch {
	case st == nil:
		return fmt.Errorf("%s record for unknown workload %s", r.Event, r.Workload)
	case strings.HasPrefix(r.Reason, "CommitConflict"):
		return fmt.Errorf("the scheduler planned to admit %s (%s), and the model refused it: %s", r.Workload, st.phase, r.Reason)
	case holdsPods(st.phase):
		return fmt.Errorf("the scheduler decided on %s as pending (%s: %s) while it is %s", r.Workload, r.Event, r.Reason, st.phase)
	}
	return nil
}

// count adds a workload record to its tally.
func (c *invariantChecker) count(r EventRecord) {
	t := c.tally[r.Workload]
	if t == nil {
		t = &eventTally{}
		c.tally[r.Workload] = t
	}
	switch r.Event {
	case EvSubmitted:
		t.submitted++
	case EvAdmitted:
		t.admitted++
	case EvPlaced:
		t.placed++
	case EvEvicted:
		t.evicted++
	case EvRequeued:
		t.requeued++
	case EvFinished:
		t.finished++
	}
}

func (c *invariantChecker) onSample(cs ClusterState) {
	c.samples++
	if c.err == nil {
		c.fail(c.checkAll(cs))
	}
}

// checkAll runs every check of a sample and returns the first violation.
func (c *invariantChecker) checkAll(cs ClusterState) error {
	c.frs, c.members = c.allFRs(), c.trees()
	checks := []func() error{
		c.checkDevices, c.checkCordoned, c.checkGangs,
		c.checkQuotaUsage, c.checkQuotaStructure, c.checkQuotaLimits,
		c.checkLifecycle, c.checkLogTotals, func() error { return c.checkSampleCounts(cs) },
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// holdsPods says whether a workload in phase p has its gang bound and its quota counted.
func holdsPods(p plan.Phase) bool { return p == plan.Running || p == plan.Preempting }

// ---- 1. devices ----

// gpuHolders is, for one GPU, the pod holding each memory slice (a whole GPU holds all
// of them); maxSlices bounds the slices of every catalog model.
type gpuHolders struct {
	gpu     devices.GPU
	holders [maxSlices]cluster.PodRef
	held    [maxSlices]bool
}

const maxSlices = 8

// checkDevices: no GPU memory slice is held by two pods (a whole GPU holds all its
// slices, a MIG instance the slices of its placement), every held device exists on the
// pod's node (a MIG instance in its GPU's current layout, a whole GPU on a GPU without
// one), and every pod holds exactly the devices its requests ask for.
func (c *invariantChecker) checkDevices() error {
	s := c.s
	listed := 0
	for i := 0; i < s.snap.NumNodes(); i++ {
		node, refs := s.snap.Node(i).Name, s.snap.PodsOn(i)
		if len(refs) == 0 {
			continue
		}
		gpus := gpuTable(s.snap.Devices(i))
		for _, ref := range refs {
			listed++
			bp, ok := s.snap.Pod(ref)
			if !ok || bp.Node != node {
				return fmt.Errorf("node %s lists pod %s, which the snapshot has on %q", node, ref, bp.Node)
			}
			if err := c.holdSlices(gpus, bp); err != nil {
				return err
			}
			if err := devicesMatchRequests(bp); err != nil {
				return err
			}
		}
	}
	if all := len(s.snap.Pods()); all != listed {
		return fmt.Errorf("the snapshot has %d bound pods but its nodes list %d", all, listed)
	}
	return nil
}

// gpuTable is a node's GPUs by index, with nothing held yet.
func gpuTable(nd *devices.NodeDevices) map[int]*gpuHolders {
	out := map[int]*gpuHolders{}
	if nd == nil {
		return out
	}
	for _, g := range nd.GPUs() {
		out[g.Index] = &gpuHolders{gpu: g}
	}
	return out
}

// holdSlices marks the slices of every device of bp as held, failing on one held already.
func (c *invariantChecker) holdSlices(gpus map[int]*gpuHolders, bp cluster.BoundPod) error {
	for _, d := range bp.Devices.Devices {
		g, ok := gpus[d.GPU]
		if !ok {
			return fmt.Errorf("pod %s holds %s: node %s has no GPU-%d", bp.Ref, d.ID(), bp.Node, d.GPU)
		}
		first, n, err := c.deviceSlices(g.gpu, d)
		if err != nil {
			return fmt.Errorf("pod %s holds %s on %s: %w", bp.Ref, d.ID(), bp.Node, err)
		}
		for sl := first; sl < first+n; sl++ {
			if g.held[sl] {
				return fmt.Errorf("device %s on %s (memory slice %d) is held by pods %s and %s", d.ID(), bp.Node, sl, g.holders[sl], bp.Ref)
			}
			g.held[sl], g.holders[sl] = true, bp.Ref
		}
	}
	return nil
}

// deviceSlices is the range of memory slices device d occupies on GPU g, checking that
// the device exists there.
func (c *invariantChecker) deviceSlices(g devices.GPU, d devices.Device) (first, n int, err error) {
	m, err := c.model(g.Model)
	if err != nil {
		return 0, 0, err
	}
	all := 1
	if m.MIG != nil {
		all = m.MIG.MemorySlices
	}
	if all > maxSlices {
		return 0, 0, fmt.Errorf("model %s has %d memory slices, more than the check's %d", m.ID, all, maxSlices)
	}
	switch d.Kind {
	case devices.WholeGPU:
		if len(g.Instances) > 0 {
			return 0, 0, fmt.Errorf("a whole GPU handed out while the GPU is MIG-partitioned (%d instances)", len(g.Instances))
		}
		return 0, all, nil
	case devices.MIGDevice:
		p, ok := m.Profile(d.Instance.Profile)
		if !ok || !hasInstance(g.Instances, d.Instance) {
			return 0, 0, fmt.Errorf("instance %s is not in the GPU's layout %v", d.Instance, g.Instances)
		}
		if d.Instance.Start < 0 || d.Instance.Start+p.MemorySlices > all {
			return 0, 0, fmt.Errorf("instance %s does not fit the GPU's %d memory slices", d.Instance, all)
		}
		return d.Instance.Start, p.MemorySlices, nil
	}
	return 0, 0, fmt.Errorf("device kind %d: the invariant worlds hand out whole GPUs and MIG instances only", d.Kind)
}

func (c *invariantChecker) model(id devices.ModelID) (devices.Model, error) {
	if m, ok := c.models[id]; ok {
		return m, nil
	}
	m, err := devices.LookupModel(string(id))
	if err == nil {
		c.models[id] = m
	}
	return m, err
}

func hasInstance(layout []devices.Instance, in devices.Instance) bool {
	for _, l := range layout {
		if l == in {
			return true
		}
	}
	return false
}

// devicesMatchRequests: a pod holds one whole GPU per nvidia.com/gpu it requests and one
// instance of a profile per nvidia.com/mig-<profile>, and nothing else.
func devicesMatchRequests(bp cluster.BoundPod) error {
	got := resources.Vector{}
	for _, d := range bp.Devices.Devices {
		switch d.Kind {
		case devices.WholeGPU:
			got[resources.NvidiaGPU]++
		case devices.MIGDevice:
			got[resources.Name(resources.MIGPrefix+d.Instance.Profile)]++
		}
	}
	want := resources.Vector{}
	for r, a := range bp.Requests {
		if a != 0 && (r == resources.NvidiaGPU || strings.HasPrefix(string(r), resources.MIGPrefix)) {
			want[r] = a
		}
	}
	if !sameAmounts(got, want) {
		return fmt.Errorf("pod %s on %s holds %s (%s) for requests %s", bp.Ref, bp.Node, got, bp.Devices, want)
	}
	return nil
}

// sameAmounts reports whether two vectors hold the same non-zero amounts.
func sameAmounts(a, b resources.Vector) bool {
	for _, pair := range [][2]resources.Vector{{a, b}, {b, a}} {
		for r, n := range pair[0] {
			if pair[1][r] != n {
				return false
			}
		}
	}
	return true
}

// ---- 2. gangs ----

// checkCordoned: a node under spot notice takes no new pods: every pod on it belongs to
// a workload that was noticed (Preempting).
func (c *invariantChecker) checkCordoned() error {
	s := c.s
	for _, node := range invSortedKeys(s.cordon) {
		i, ok := s.snap.NodeIndex(node)
		if !ok {
			return fmt.Errorf("node %s is under notice but not in the snapshot", node)
		}
		for _, ref := range s.snap.PodsOn(i) {
			if st := s.wls[ref.Workload]; st == nil || st.phase != plan.Preempting {
				return fmt.Errorf("pod %s runs on node %s under spot notice, and its workload was not noticed", ref, node)
			}
		}
	}
	return nil
}

// checkGangs: a running or noticed workload has its whole gang bound, exactly as its
// bindings say; every other workload has no pod bound and no bindings; no pod is bound
// for a workload the simulator does not know.
func (c *invariantChecker) checkGangs() error {
	s := c.s
	bound := map[api.WorkloadID][]cluster.BoundPod{}
	for _, bp := range s.snap.Pods() {
		bound[bp.Ref.Workload] = append(bound[bp.Ref.Workload], bp)
	}
	for _, id := range s.order {
		st, pods := s.wls[id], bound[id]
		delete(bound, id)
		if !holdsPods(st.phase) {
			if len(pods) > 0 || len(st.bindings) > 0 {
				return fmt.Errorf("workload %s is %s with %d pods bound and %d bindings", id, st.phase, len(pods), len(st.bindings))
			}
			continue
		}
		if err := gangComplete(st.w, pods); err != nil {
			return fmt.Errorf("workload %s (%s): %w", id, st.phase, err)
		}
		if err := bindingsMatch(st.bindings, pods); err != nil {
			return fmt.Errorf("workload %s (%s): %w", id, st.phase, err)
		}
	}
	for id, pods := range bound {
		return fmt.Errorf("%d pods bound for unknown workload %s", len(pods), id)
	}
	return nil
}

// gangComplete: the bound pods are pods of w's sets (index below Count), and the gang
// is complete: MinMember pods over all sets when set, else each set's MinCount (or
// Count) pods.
func gangComplete(w *api.Workload, pods []cluster.BoundPod) error {
	per := map[string]int32{}
	for _, bp := range pods {
		ps, ok := podSet(w, bp.Ref.PodSet)
		if !ok || bp.Ref.Index < 0 || bp.Ref.Index >= int(ps.Count) {
			return fmt.Errorf("pod %s is not a pod of the workload's sets", bp.Ref)
		}
		per[ps.Name]++
	}
	if w.MinMember > 0 {
		if int32(len(pods)) < w.MinMember {
			return fmt.Errorf("%d pods bound, below its gang's minMember %d", len(pods), w.MinMember)
		}
		return nil
	}
	for _, ps := range w.PodSets {
		if got := per[ps.Name]; got < ps.GangCount() {
			return fmt.Errorf("pod set %s has %d of its gang's %d pods bound (count %d, minCount %d)", ps.Name, got, ps.GangCount(), ps.Count, ps.MinCount)
		}
	}
	return nil
}

func podSet(w *api.Workload, name string) (api.PodSet, bool) {
	for _, ps := range w.PodSets {
		if ps.Name == name {
			return ps, true
		}
	}
	return api.PodSet{}, false
}

// bindingsMatch: the simulator's bindings of a workload are exactly its bound pods, on
// the same nodes with the same devices.
func bindingsMatch(bs []plan.Binding, pods []cluster.BoundPod) error {
	if len(bs) != len(pods) {
		return fmt.Errorf("%d bindings but %d pods bound", len(bs), len(pods))
	}
	byRef := map[cluster.PodRef]cluster.BoundPod{}
	for _, bp := range pods {
		byRef[bp.Ref] = bp
	}
	for _, b := range bs {
		bp, ok := byRef[podRef(b)]
		if !ok {
			return fmt.Errorf("binding %s is not bound", podRef(b))
		}
		if bp.Node != b.Node || bp.Devices.String() != b.Assignment.String() {
			return fmt.Errorf("binding %s says %s %s, the snapshot %s %s", podRef(b), b.Node, b.Assignment, bp.Node, bp.Devices)
		}
	}
	return nil
}

// ---- 3. quota ----

// quotaCell is one ClusterQueue's quota of one resource in one flavor.
type quotaCell struct {
	cq string
	fr admission.FlavorResource
}

// cellLimit is what a ClusterQueue's spec says of one flavor-resource.
type cellLimit struct {
	nominal        resources.Amount
	borrow, lend   *resources.Amount
	inCohort, have bool
}

// guaranteed is the part of the nominal quota the ClusterQueue does not lend.
func (l cellLimit) guaranteed() resources.Amount {
	if l.lend == nil {
		return 0
	}
	return max(0, l.nominal-*l.lend)
}

// treeOf names the quota tree a ClusterQueue belongs to: its cohort, or itself.
func treeOf(cq *api.ClusterQueue) string {
	if cq.Cohort != "" {
		return "cohort:" + cq.Cohort
	}
	return "cq:" + cq.Name
}

// limitOf reads a ClusterQueue's current spec for one flavor-resource.
func limitOf(cq *api.ClusterQueue, fr admission.FlavorResource) cellLimit {
	for _, g := range cq.ResourceGroups {
		for _, f := range g.Flavors {
			if f.Name != fr.Flavor {
				continue
			}
			for _, r := range f.Resources {
				if r.Name == fr.Resource {
					return cellLimit{nominal: r.Nominal, borrow: r.BorrowingLimit, lend: r.LendingLimit, inCohort: cq.Cohort != "", have: true}
				}
			}
		}
	}
	return cellLimit{inCohort: cq.Cohort != ""}
}

// allFRs is every flavor-resource any ClusterQueue has quota for, sorted.
func (c *invariantChecker) allFRs() []admission.FlavorResource {
	set := map[admission.FlavorResource]bool{}
	for _, cq := range c.s.cqs {
		for _, g := range cq.ResourceGroups {
			for _, f := range g.Flavors {
				for _, r := range f.Resources {
					set[admission.FlavorResource{Flavor: f.Name, Resource: r.Name}] = true
				}
			}
		}
	}
	out := make([]admission.FlavorResource, 0, len(set))
	for fr := range set {
		out = append(out, fr)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Flavor != out[j].Flavor {
			return out[i].Flavor < out[j].Flavor
		}
		return out[i].Resource < out[j].Resource
	})
	return out
}

// trees groups the ClusterQueues by quota tree, names sorted.
func (c *invariantChecker) trees() map[string][]string {
	out := map[string][]string{}
	for _, name := range invSortedKeys(c.s.cqs) {
		t := treeOf(c.s.cqs[name])
		out[t] = append(out[t], name)
	}
	return out
}

// checkQuotaUsage: the workloads admission holds as admitted are exactly the running and
// noticed ones, in their ClusterQueues, and its usage of every ClusterQueue and
// flavor-resource is the sum of their assignments.
func (c *invariantChecker) checkQuotaUsage() error {
	s := c.s
	want := map[quotaCell]resources.Amount{}
	holding := 0
	for id := range s.live.all() {
		st := s.wls[id]
		if !holdsPods(st.phase) {
			continue
		}
		holding++
		aw, ok := s.quota.Admitted(id)
		if !ok || aw.ClusterQueue != st.clusterQueue || st.assignment.ClusterQueue != st.clusterQueue {
			return fmt.Errorf("workload %s is %s in %s but admission holds it admitted=%v", id, st.phase, st.clusterQueue, ok)
		}
		for _, u := range st.assignment.Usage {
			want[quotaCell{st.clusterQueue, u.FlavorResource}] += u.Amount
		}
	}
	if n := len(s.quota.AdmittedWorkloads()); n != holding {
		return fmt.Errorf("admission holds %d workloads admitted, %d are running or noticed", n, holding)
	}
	for _, cq := range s.quota.ClusterQueues() {
		for _, fr := range c.frs {
			k := quotaCell{cq, fr}
			if got := s.quota.Usage(cq, fr.Flavor, fr.Resource); got != want[k] {
				return fmt.Errorf("%s uses %d of %s/%s, its running workloads' assignments sum to %d", cq, got, fr.Flavor, fr.Resource, want[k])
			}
			delete(want, k)
		}
	}
	for k, a := range want {
		return fmt.Errorf("running workloads of %s use %d of %s/%s, which no ClusterQueue has quota for", k.cq, a, k.fr.Flavor, k.fr.Resource)
	}
	return nil
}

// checkQuotaStructure: admission's nominal quotas are the ClusterQueues' current specs,
// and each cohort's quota and usage are what its members' specs and usage make them:
// the sum of what each lends (nominal minus guaranteed), the sum of what each uses
// above its guaranteed quota.
func (c *invariantChecker) checkQuotaStructure() error {
	s := c.s
	for _, fr := range c.frs {
		for _, name := range invSortedKeys(s.cqs) {
			if got, want := s.quota.Nominal(name, fr.Flavor, fr.Resource), limitOf(s.cqs[name], fr).nominal; got != want {
				return fmt.Errorf("admission's nominal quota of %s in %s/%s is %d, the spec says %d", name, fr.Flavor, fr.Resource, got, want)
			}
		}
		for _, tree := range invSortedKeys(c.members) {
			members := c.members[tree]
			cohort := s.cqs[members[0]].Cohort
			if cohort == "" {
				continue
			}
			quota, usage := c.cohortSums(members, fr)
			if got := s.quota.CohortQuota(cohort, fr.Flavor, fr.Resource); got != quota {
				return fmt.Errorf("%s: admission's quota of %s/%s is %d, its members lend %d", tree, fr.Flavor, fr.Resource, got, quota)
			}
			if got := s.quota.CohortUsage(cohort, fr.Flavor, fr.Resource); got != usage {
				return fmt.Errorf("%s: admission's usage of %s/%s is %d, its members use %d above their guaranteed quota", tree, fr.Flavor, fr.Resource, got, usage)
			}
		}
	}
	return nil
}

// cohortSums is what a cohort's members lend to it and use of it in one flavor-resource.
func (c *invariantChecker) cohortSums(members []string, fr admission.FlavorResource) (quota, usage resources.Amount) {
	for _, name := range members {
		l := limitOf(c.s.cqs[name], fr)
		g := l.guaranteed()
		quota += l.nominal - g
		usage += max(0, c.s.quota.Usage(name, fr.Flavor, fr.Resource)-g)
	}
	return quota, usage
}

// checkQuotaLimits: every quota tree no quota change has left above its limits is
// within them.
func (c *invariantChecker) checkQuotaLimits() error {
	for _, tree := range invSortedKeys(c.members) {
		err := c.treeWithinLimits(c.members[tree])
		if c.tainted[tree] {
			if err == nil {
				delete(c.tainted, tree) // within its limits again: from now on it stays so
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", tree, err)
		}
	}
	return nil
}

// treeWithinLimits: in every flavor-resource, a ClusterQueue without a cohort uses at
// most its nominal quota; one in a cohort at most nominal + borrowing limit (when set)
// and nothing where it has no quota; the cohort's members together use at most what
// they lend above their guaranteed quotas.
func (c *invariantChecker) treeWithinLimits(members []string) error {
	for _, fr := range c.frs {
		for _, name := range members {
			if err := c.cqWithinLimits(name, fr); err != nil {
				return err
			}
		}
		if c.s.cqs[members[0]].Cohort == "" {
			continue
		}
		if quota, usage := c.cohortSums(members, fr); usage > quota {
			return fmt.Errorf("cohort %s uses %d of %s/%s, above its quota %d", c.s.cqs[members[0]].Cohort, usage, fr.Flavor, fr.Resource, quota)
		}
	}
	return nil
}

// cqWithinLimits checks one ClusterQueue's own limit in one flavor-resource.
func (c *invariantChecker) cqWithinLimits(name string, fr admission.FlavorResource) error {
	l := limitOf(c.s.cqs[name], fr)
	u := c.s.quota.Usage(name, fr.Flavor, fr.Resource)
	switch {
	case !l.have && u > 0:
		return fmt.Errorf("%s uses %d of %s/%s, where it has no quota", name, u, fr.Flavor, fr.Resource)
	case !l.inCohort && u > l.nominal:
		return fmt.Errorf("%s (no cohort) uses %d of %s/%s, above its nominal %d", name, u, fr.Flavor, fr.Resource, l.nominal)
	case l.inCohort && l.borrow != nil && u > l.nominal+*l.borrow:
		return fmt.Errorf("%s uses %d of %s/%s, above nominal %d + borrowing limit %d", name, u, fr.Flavor, fr.Resource, l.nominal, *l.borrow)
	}
	return nil
}

// checkAdmission runs right after a workload's quota is reserved: in every
// flavor-resource it takes, its ClusterQueue is within its own limit, and where the
// admission takes from the cohort (raises what the queue uses above its guaranteed
// quota), the cohort is within its quota. This holds in trees a quota change left above
// their limits too: nothing new may be admitted above them.
func (c *invariantChecker) checkAdmission(id api.WorkloadID) error {
	s := c.s
	st := s.wls[id]
	if st == nil {
		return fmt.Errorf("admitted record for unknown workload %s", id)
	}
	cq := s.cqs[st.clusterQueue]
	for _, u := range st.assignment.Usage {
		fr := u.FlavorResource
		if err := c.cqWithinLimits(cq.Name, fr); err != nil {
			return fmt.Errorf("admitting %s: %w", id, err)
		}
		if cq.Cohort == "" {
			continue
		}
		g := limitOf(cq, fr).guaranteed()
		after := s.quota.Usage(cq.Name, fr.Flavor, fr.Resource)
		if max(0, after-g) <= max(0, after-u.Amount-g) {
			continue // within its guaranteed quota: takes nothing from the cohort
		}
		if quota, usage := c.cohortSums(c.trees()[treeOf(cq)], fr); usage > quota {
			return fmt.Errorf("admitting %s: cohort %s uses %d of %s/%s, above its quota %d", id, cq.Cohort, usage, fr.Flavor, fr.Resource, quota)
		}
	}
	return nil
}

// ---- 4. no workload lost ----

// checkLifecycle: every submitted, unfinished workload is on the live list once and is
// pending, running or noticed; an unsubmitted one is pending with no record; a finished
// one is off the list and finished exactly once; each was submitted once, admitted and
// placed once per run, requeued once per eviction, and its runs are its evictions plus
// the current one plus the finished one.
func (c *invariantChecker) checkLifecycle() error {
	s := c.s
	live := map[api.WorkloadID]bool{}
	var prev api.WorkloadID
	for id := range s.live.all() {
		if live[id] || (prev != "" && prev >= id) {
			return fmt.Errorf("live list not sorted or has %s twice: %v", id, s.live.ids)
		}
		live[id], prev = true, id
	}
	if gone := len(s.live.ids) - len(live); gone != s.live.dead {
		return fmt.Errorf("live list counts %d dropped entries, holds %d", s.live.dead, gone)
	}
	for _, id := range s.order {
		st := s.wls[id]
		if err := liveAgrees(st, live[id]); err != nil {
			return fmt.Errorf("workload %s: %w", id, err)
		}
		delete(live, id)
		if err := tallyAgrees(st, c.tallyOf(id)); err != nil {
			return fmt.Errorf("workload %s (%s, run %d): %w", id, st.phase, st.run, err)
		}
	}
	for id := range live {
		return fmt.Errorf("live list holds unknown workload %s", id)
	}
	return checkRunningCache(&s.views)
}

// checkRunningCache: every workload in the running views knows its place there, and
// the count of checkpointing ones is right (a wrong count skips their views' refresh).
func checkRunningCache(c *runningCache) error {
	if len(c.of) != len(c.list) {
		return fmt.Errorf("running views: %d workloads, %d views", len(c.of), len(c.list))
	}
	n := 0
	for i, st := range c.of {
		if st.viewAt != i || c.list[i].ID != st.id {
			return fmt.Errorf("running views: %s at %d says %d, view %s", st.id, i, st.viewAt, c.list[i].ID)
		}
		if st.w.Timing.CheckpointEvery > 0 {
			n++
		}
	}
	if n != c.checkpointing {
		return fmt.Errorf("running views: %d checkpointing, counted %d", n, c.checkpointing)
	}
	return nil
}

func (c *invariantChecker) tallyOf(id api.WorkloadID) eventTally {
	if t := c.tally[string(id)]; t != nil {
		return *t
	}
	return eventTally{}
}

// liveAgrees checks a workload's phase against its place on the live list.
func liveAgrees(st *wlState, live bool) error {
	switch {
	case !st.submitted:
		if live || st.phase != plan.Pending {
			return fmt.Errorf("not submitted yet, but %s and live=%v", st.phase, live)
		}
	case st.phase == plan.Finished:
		if live {
			return fmt.Errorf("finished but still live")
		}
	case st.phase == plan.Pending || holdsPods(st.phase):
		if !live {
			return fmt.Errorf("%s but not on the live list: lost", st.phase)
		}
	default:
		return fmt.Errorf("in transient phase %s between instants", st.phase)
	}
	return nil
}

// tallyAgrees checks a workload's records against its state.
func tallyAgrees(st *wlState, t eventTally) error {
	b := func(ok bool) int {
		if ok {
			return 1
		}
		return 0
	}
	switch {
	case t.submitted != b(st.submitted):
		return fmt.Errorf("%d submitted records", t.submitted)
	case t.finished != b(st.phase == plan.Finished):
		return fmt.Errorf("%d finished records", t.finished)
	case t.admitted != st.run || t.placed != st.run:
		return fmt.Errorf("%d admitted and %d placed records for %d runs", t.admitted, t.placed, st.run)
	case t.evicted != t.requeued:
		return fmt.Errorf("%d evicted but %d requeued records", t.evicted, t.requeued)
	case st.run != t.evicted+b(holdsPods(st.phase))+t.finished:
		return fmt.Errorf("%d runs, %d evictions, finished %d, holding %v", st.run, t.evicted, t.finished, holdsPods(st.phase))
	}
	return nil
}

// checkLogTotals: the observer saw every record of the log, and the log's admitted and
// finished records count the model's runs and finished workloads.
func (c *invariantChecker) checkLogTotals() error {
	s := c.s
	if len(s.log) != c.records {
		return fmt.Errorf("the log has %d records, observers saw %d", len(s.log), c.records)
	}
	runs, finished := 0, 0
	for _, st := range s.wls {
		runs += st.run
		if st.phase == plan.Finished {
			finished++
		}
	}
	for _, r := range s.log[c.logSeen:] {
		switch r.Event {
		case EvAdmitted:
			c.logAdmitted++
		case EvFinished:
			c.logFinished++
		}
	}
	c.logSeen = len(s.log)
	if c.logAdmitted != runs || c.logFinished != finished {
		return fmt.Errorf("the log has %d admitted and %d finished records; the model %d runs and %d finished workloads", c.logAdmitted, c.logFinished, runs, finished)
	}
	return nil
}

// checkSampleCounts: the sample's per-queue pending and running counts add up to the
// model's submitted pending and running or noticed workloads.
func (c *invariantChecker) checkSampleCounts(cs ClusterState) error {
	pending, running := 0, 0
	for id := range c.s.live.all() {
		switch st := c.s.wls[id]; {
		case st.phase == plan.Pending:
			pending++
		case holdsPods(st.phase):
			running++
		}
	}
	gotP, gotR := 0, 0
	for _, q := range cs.Queues {
		gotP += q.Pending
		gotR += q.Running
	}
	if gotP != pending || gotR != running {
		return fmt.Errorf("sample counts %d pending and %d running, the model %d and %d", gotP, gotR, pending, running)
	}
	return nil
}

// invSortedKeys are a map's keys, sorted (deterministic walks and messages).
func invSortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
