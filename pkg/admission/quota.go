package admission

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Quota is the cohort tree with its usage: ClusterQueues are leaves, cohorts inner nodes.
// The structure (names, quotas, limits) is built once and shared by every clone; only
// usage and the admitted set are copied, so Clone is cheap enough for per-cycle
// what-ifs. Quota is not safe for concurrent mutation.
type Quota struct {
	s        *structure
	usage    []resources.Amount // per node × flavor-resource, see structure.idx
	admitted admittedSet
	seq      int64
	// treeVer counts the admissions and releases in each cohort tree, by root node: an
	// answer read from one tree stays true while its count does not move (TreeVersion).
	treeVer []int64
	// byCQ indexes the admitted workloads by ClusterQueue node, built on first use by
	// preemption (admittedIn) and kept up to date by Admit and Release; nil until then.
	byCQ [][]*AdmittedWorkload
}

// AdmittedWorkload is what Quota remembers about an admitted workload.
type AdmittedWorkload struct {
	ID           api.WorkloadID
	ClusterQueue string
	LocalQueue   string // "namespace/name"
	Priority     int32
	Created      time.Time
	// Seq orders admissions: a larger Seq was admitted more recently.
	Seq      int64
	Usage    []FlavorAmount
	GPUMilli resources.MilliGPU // total in the common unit, for admission fair sharing
	cq       nodeID
	cells    []cell
}

// cell is a usage amount on a dense flavor-resource index.
type cell struct {
	fr     frID
	amount resources.Amount
}

// NewQuota builds the cohort tree from the loaded objects. Errors name the object and
// field: unknown flavors, negative quotas, a resource covered by two groups, cohort cycles.
func NewQuota(objs *api.Objects, opts Options) (*Quota, error) {
	if objs == nil {
		return nil, fmt.Errorf("admission: no objects")
	}
	s, err := buildStructure(objs, opts)
	if err != nil {
		return nil, err
	}
	return &Quota{
		s:        s,
		usage:    make([]resources.Amount, len(s.nodes)*len(s.frs)),
		admitted: newAdmittedSet(),
		treeVer:  make([]int64, len(s.nodes)),
	}, nil
}

// Clone returns an independent copy for what-ifs; the shared structure is immutable.
func (q *Quota) Clone() *Quota {
	// Records are never mutated after Admit, so the copies may share them.
	return &Quota{s: q.s, usage: append([]resources.Amount(nil), q.usage...), admitted: q.admitted.clone(), seq: q.seq,
		treeVer: slices.Clone(q.treeVer)}
}

// ClusterQueues returns the ClusterQueue names, sorted.
func (q *Quota) ClusterQueues() []string {
	var out []string
	for _, n := range q.s.nodes {
		if n.isCQ {
			out = append(out, n.name)
		}
	}
	return out
}

// ClusterQueue returns the ClusterQueue object by name.
func (q *Quota) ClusterQueue(name string) (*api.ClusterQueue, bool) {
	id, ok := q.s.cqID(name)
	if !ok {
		return nil, false
	}
	return q.s.nodes[id].cq, true
}

// Admitted returns the admitted workload id, if any.
func (q *Quota) Admitted(id api.WorkloadID) (*AdmittedWorkload, bool) {
	w, ok := q.admitted.get(id)
	return w, ok
}

// AdmittedWorkloads returns all admitted workloads ordered by admission (Seq).
func (q *Quota) AdmittedWorkloads() []*AdmittedWorkload {
	out := make([]*AdmittedWorkload, 0, q.admitted.len())
	q.admitted.each(func(w *AdmittedWorkload) { out = append(out, w) })
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// Admit records wl's usage from a fitting assignment (mode Borrow or Fit) in its
// ClusterQueue and, through lending, in the cohorts above. It re-checks the fit against
// current usage, so an assignment computed on stale state cannot overcommit quota.
func (q *Quota) Admit(wl *api.Workload, a Assignment) error {
	if wl == nil {
		return fmt.Errorf("admission: Admit: nil workload")
	}
	id := wl.ID()
	if _, dup := q.admitted.get(id); dup {
		return fmt.Errorf("workload %s: already admitted", id)
	}
	cq, ok := q.s.cqID(a.ClusterQueue)
	if !ok {
		return fmt.Errorf("workload %s: clusterQueue %q not found", id, a.ClusterQueue)
	}
	if a.Workload != id {
		return fmt.Errorf("workload %s: assignment is for %s", id, a.Workload)
	}
	cells, err := q.s.cells(a.Usage)
	if err != nil {
		return fmt.Errorf("workload %s: %w", id, err)
	}
	for _, c := range cells {
		if avail := q.available(cq, c.fr); c.amount > avail {
			return fmt.Errorf("workload %s: %s needs %d but only %d is available", id, q.s.frs[c.fr], c.amount, avail)
		}
	}
	q.seq++
	rec := &AdmittedWorkload{
		ID: id, ClusterQueue: a.ClusterQueue, LocalQueue: wl.Namespace + "/" + wl.Queue,
		Priority: wl.Priority, Created: wl.Created, Seq: q.seq,
		Usage: append([]FlavorAmount(nil), a.Usage...), GPUMilli: a.GPUMilli, cq: cq, cells: cells,
	}
	q.record(rec)
	return nil
}

// record adds an admitted workload and its usage.
func (q *Quota) record(rec *AdmittedWorkload) {
	q.admitted.add(rec)
	q.apply(rec.cq, rec.cells, 1)
	q.treeChanged(rec.cq)
	if q.byCQ != nil {
		q.byCQ[rec.cq] = append(q.byCQ[rec.cq], rec)
	}
}

// admittedIn returns the workloads admitted in ClusterQueue node cq (not to be changed).
func (q *Quota) admittedIn(cq nodeID) []*AdmittedWorkload {
	if q.byCQ == nil {
		q.byCQ = make([][]*AdmittedWorkload, len(q.s.nodes))
		q.admitted.each(func(w *AdmittedWorkload) { q.byCQ[w.cq] = append(q.byCQ[w.cq], w) })
	}
	return q.byCQ[cq]
}

// Release removes an admitted workload's usage (finished, evicted or preempted).
func (q *Quota) Release(id api.WorkloadID) error {
	rec, ok := q.admitted.get(id)
	if !ok {
		return fmt.Errorf("workload %s: not admitted", id)
	}
	q.admitted.remove(id)
	q.apply(rec.cq, rec.cells, -1)
	q.treeChanged(rec.cq)
	if q.byCQ != nil {
		// A new slice: the old one may still be read by a caller of admittedIn.
		q.byCQ[rec.cq] = slices.DeleteFunc(slices.Clone(q.byCQ[rec.cq]), func(w *AdmittedWorkload) bool { return w == rec })
	}
	return nil
}

func (s *structure) cells(usage []FlavorAmount) ([]cell, error) {
	out := make([]cell, 0, len(usage))
	for _, u := range usage {
		f, ok := s.frIndex[u.FlavorResource]
		if !ok {
			return nil, fmt.Errorf("no quota for %s", u.FlavorResource)
		}
		if u.Amount < 0 {
			return nil, fmt.Errorf("negative usage %d for %s", u.Amount, u.FlavorResource)
		}
		out = append(out, cell{f, u.Amount})
	}
	return out, nil
}

// treeChanged counts an admission or release in node n's cohort tree.
func (q *Quota) treeChanged(n nodeID) {
	if q.treeVer != nil {
		q.treeVer[q.s.root(n)]++
	}
}

// TreeVersion is the count of admissions and releases so far in ClusterQueue cq's
// cohort tree (false: no such ClusterQueue). Every answer about cq's quota reads that
// tree alone, so one kept with the version (and this Quota) holds while it is the same.
func (q *Quota) TreeVersion(cq string) (int64, bool) {
	n, ok := q.s.cqID(cq)
	if !ok || q.treeVer == nil {
		return 0, false
	}
	return q.treeVer[q.s.root(n)], true
}

// root is node n's cohort tree's root.
func (s *structure) root(n nodeID) nodeID {
	for s.nodes[n].parent != noNode {
		n = s.nodes[n].parent
	}
	return n
}
