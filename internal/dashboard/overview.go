package dashboard

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim/report"
	"github.com/gantry-sched/gantry/pkg/view"
)

// overviewPage is the data of the overview: totals, the cohort tree and a row per
// ClusterQueue.
type overviewPage struct {
	Totals  totals
	Cohorts []cohortNode
	// Loose are the ClusterQueues in no cohort.
	Loose  []string
	Queues []queueRow
}

type totals struct {
	Nodes, ReadyNodes, GPUs, HealthyGPUs int
	Allocated, Capacity                  string // GPUs
	AllocatedPct                         int64
	Pending, Admitted                    int
}

// cohortNode is one cohort with the queues and cohorts under it.
type cohortNode struct {
	Name     string
	Queues   []queueRef
	Children []cohortNode
}

type queueRef struct {
	Name string
	Held bool
}

// queueRow is one ClusterQueue's line: GPU-equivalents as text and as a bar.
type queueRow struct {
	Name, Cohort            string
	Held                    bool
	Nominal, Used, Borrowed string
	FairShare               string
	Pending, Admitted       int
	Bar                     usageBar
	Quota                   []quotaRow
}

// usageBar draws used GPUs against nominal quota, in percent of the bar's scale (the
// larger of nominal and used): the part within quota, the borrowed part after it, and
// where nominal quota ends.
type usageBar struct {
	OwnPct, BorrowedPct, NominalPct int64
}

type quotaRow struct {
	Flavor, Resource               string
	Nominal, Used, Borrowed, Limit string
}

func buildOverview(s view.Snapshot) overviewPage {
	p := overviewPage{Totals: totalsOf(s)}
	p.Cohorts, p.Loose = cohortTree(s)
	for _, q := range s.Queues {
		p.Queues = append(p.Queues, queueRowOf(q))
	}
	return p
}

func totalsOf(s view.Snapshot) totals {
	var t totals
	var alloc, capacity resources.MilliGPU
	for _, n := range s.Nodes {
		t.Nodes++
		if n.Ready {
			t.ReadyNodes++
		}
		for _, g := range n.GPUs {
			t.GPUs++
			if g.Healthy {
				t.HealthyGPUs++
			}
			if g.Healthy && n.Ready {
				capacity += resources.MilliPerGPU
				alloc += min(g.Allocated, resources.MilliPerGPU)
			}
		}
	}
	t.Allocated, t.Capacity = formatGPU(alloc), formatGPU(capacity)
	t.AllocatedPct = percentOf(int64(alloc), int64(capacity))
	for _, w := range s.Workloads {
		switch {
		case waiting(w.Phase):
			t.Pending++
		case w.Phase == view.Admitted || w.Phase == view.Running:
			t.Admitted++
		}
	}
	return t
}

func queueRowOf(q view.Queue) queueRow {
	r := queueRow{
		Name: q.Name, Cohort: q.Cohort, Held: q.Held,
		Nominal: formatGPU(q.NominalGPU), Used: formatGPU(q.UsedGPU), Borrowed: formatGPU(q.BorrowedGPU),
		Pending: q.Pending, Admitted: q.Admitted, Bar: barOf(q),
	}
	if q.FairShare > 0 {
		r.FairShare = report.FormatPermille(q.FairShare)
	}
	for _, row := range q.Quota {
		qr := quotaRow{Flavor: row.Flavor, Resource: string(row.Resource),
			Nominal: formatAmount(row.Resource, row.Nominal), Used: formatAmount(row.Resource, row.Used),
			Borrowed: formatAmount(row.Resource, row.Borrowed), Limit: "none"}
		if row.BorrowingLimit != nil {
			qr.Limit = formatAmount(row.Resource, *row.BorrowingLimit)
		}
		r.Quota = append(r.Quota, qr)
	}
	return r
}

func barOf(q view.Queue) usageBar {
	scale := int64(max(q.NominalGPU, q.UsedGPU))
	borrowed := min(q.BorrowedGPU, q.UsedGPU)
	own := q.UsedGPU - borrowed
	return usageBar{
		OwnPct:      percentOf(int64(own), scale),
		BorrowedPct: percentOf(int64(borrowed), scale),
		// The tick is one unit wide: at 100% it would fall outside the bar.
		NominalPct: min(percentOf(int64(q.NominalGPU), scale), 99),
	}
}

// cohortTree nests the cohorts by parent (roots sorted by name) with their queues, and
// lists the queues in no cohort. A cohort whose parent is not in the snapshot is a root;
// a parent cycle is cut where it would repeat a cohort.
func cohortTree(s view.Snapshot) ([]cohortNode, []string) {
	byName := map[string]view.Cohort{}
	children := map[string][]string{}
	for _, c := range s.Cohorts {
		byName[c.Name] = c
	}
	var roots []string
	for _, c := range s.Cohorts {
		if _, ok := byName[c.Parent]; ok && c.Parent != c.Name {
			children[c.Parent] = append(children[c.Parent], c.Name)
		} else {
			roots = append(roots, c.Name)
		}
	}
	held := map[string]bool{}
	inCohort := map[string][]string{}
	var loose []string
	for _, q := range s.Queues {
		held[q.Name] = q.Held
		if _, ok := byName[q.Cohort]; ok {
			inCohort[q.Cohort] = append(inCohort[q.Cohort], q.Name)
		} else {
			loose = append(loose, q.Name)
		}
	}
	var build func(name string, seen map[string]bool) cohortNode
	build = func(name string, seen map[string]bool) cohortNode {
		seen[name] = true
		n := cohortNode{Name: name}
		for _, q := range queuesOf(byName[name], inCohort[name]) {
			n.Queues = append(n.Queues, queueRef{Name: q, Held: held[q]})
		}
		kids := append([]string(nil), children[name]...)
		sort.Strings(kids)
		for _, k := range kids {
			if !seen[k] {
				n.Children = append(n.Children, build(k, seen))
			}
		}
		return n
	}
	sort.Strings(roots)
	seen := map[string]bool{}
	var out []cohortNode
	for _, r := range roots {
		out = append(out, build(r, seen))
	}
	// Cohorts only reachable through a cycle get a root of their own.
	for _, c := range s.Cohorts {
		if !seen[c.Name] {
			out = append(out, build(c.Name, seen))
		}
	}
	return out, loose
}

// queuesOf is a cohort's queues: those the cohort lists and those naming it, once each,
// sorted.
func queuesOf(c view.Cohort, naming []string) []string {
	set := map[string]bool{}
	for _, q := range append(append([]string(nil), c.Queues...), naming...) {
		set[q] = true
	}
	out := make([]string, 0, len(set))
	for q := range set {
		out = append(out, q)
	}
	sort.Strings(out)
	return out
}
