package manifest

import (
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// volcanoShare is one queue's quota once weight shares are derived.
type volcanoShare struct {
	// names are the resources its resource group covers: those its spec names, or, for a
	// weight-only queue, those of the pool it shares (the cluster's, or its parent's).
	names []resources.Name
	// amount is its quota of each: stated, or its weight share. For a parent queue it is
	// its whole subtree's where weight shares are involved (see own).
	amount resources.Vector
	// own is the nominal quota of its own ClusterQueue or Cohort. It equals amount except
	// for a parent queue's resource that it or a child shares by weight: its children's
	// quota is carved out of the parent's amount, so the Cohort keeps the rest and the
	// subtree never holds more than the parent's amount.
	own resources.Vector
	// derived marks the resources of amount that are a weight share.
	derived map[resources.Name]bool
}

// sharePool is what the children of one parent share: the parent's amounts (the
// cluster's capacity for the top-level queues) and the resources they cover.
type sharePool struct {
	amount resources.Vector
	names  []resources.Name
	// noNodes: the pool is the cluster's and the inputs have no nodes, so a resource
	// not in amount has no known size (an error for the queue that would share it).
	noNodes bool
}

// volcanoShares derives the quota of every queue, parallel to qs: top-down from root,
// each parent's pool shared among its children by weight (waterFill) after the
// children's stated quotas are taken out, each capped at its capability. Problems go to
// each queue's context.
func volcanoShares(qs []volcanoQueue, amounts []volcanoAmounts, capacity volcanoCapacity) []volcanoShare {
	t := volcanoTree{qs: qs, amounts: amounts, shares: make([]volcanoShare, len(qs)), kids: map[string][]int{}, visited: make([]bool, len(qs))}
	root := -1
	for i, q := range qs {
		t.shares[i] = volcanoShare{names: amounts[i].names, amount: resources.Vector{}, derived: map[resources.Name]bool{}}
		for _, n := range amounts[i].names {
			if a, ok := amounts[i].stated(n); ok {
				t.shares[i].amount[n] = a
			}
		}
		if q.in.Name == VolcanoRootCohort && q.in.Spec.Parent == "" {
			root = i
			continue
		}
		t.kids[volcanoParent(q)] = append(t.kids[volcanoParent(q)], i)
	}
	for p := range t.kids {
		sort.SliceStable(t.kids[p], func(a, b int) bool { return qs[t.kids[p][a]].in.Name < qs[t.kids[p][b]].in.Name })
	}
	pool := sharePool{amount: capacity.total, names: capacity.total.Names(), noNodes: !capacity.given}
	if root >= 0 {
		pool = t.rootPool(root, pool)
	}
	t.shareAmong(VolcanoRootCohort, pool)
	if root >= 0 {
		t.keepOwn(root)
	}
	t.reportOutsideRoot()
	for i := range t.shares {
		if t.shares[i].own == nil {
			t.shares[i].own = t.shares[i].amount
		}
	}
	return t.shares
}

// volcanoParent is the queue's parent: spec.parent, else Volcano's root queue.
func volcanoParent(q volcanoQueue) string {
	if q.in.Spec.Parent != "" {
		return q.in.Spec.Parent
	}
	return VolcanoRootCohort
}

type volcanoTree struct {
	qs      []volcanoQueue
	amounts []volcanoAmounts
	shares  []volcanoShare
	kids    map[string][]int // parent name -> children, by name
	visited []bool
}

// rootPool: a Queue "root" among the inputs (Volcano's own root queue) holds the whole
// cluster, or what it states; its children share that.
func (t *volcanoTree) rootPool(root int, cluster sharePool) sharePool {
	t.visited[root] = true
	s := &t.shares[root]
	if t.amounts[root].weightOnly() {
		s.names = cluster.names
	}
	pool := sharePool{amount: resources.Vector{}, names: s.names, noNodes: cluster.noNodes}
	var unknown []resources.Name
	for _, n := range s.names {
		if _, ok := t.amounts[root].stated(n); !ok {
			a, known := cluster.amount[n]
			if cluster.noNodes && !known {
				unknown = append(unknown, n)
				continue
			}
			s.amount[n], s.derived[n] = a, true
		}
		pool.amount[n] = s.amount[n]
	}
	if cluster.noNodes && (len(s.names) == 0 || len(unknown) > 0) {
		t.reportNoNodes(root, unknown)
	}
	return pool
}

// shareAmong derives the quota of parent's children from pool, then of their children.
func (t *volcanoTree) shareAmong(parent string, pool sharePool) {
	kids := t.kids[parent]
	for _, k := range kids {
		t.visited[k] = true
		if t.amounts[k].weightOnly() {
			t.shares[k].names = pool.names
		}
	}
	unknown := map[int][]resources.Name{}
	for _, n := range unionNames(t.shares, kids) {
		t.shareResource(n, kids, pool, unknown)
	}
	for _, k := range kids {
		if pool.noNodes && (len(t.shares[k].names) == 0 || len(unknown[k]) > 0) {
			t.reportNoNodes(k, unknown[k])
		}
	}
	for _, k := range kids {
		name := t.qs[k].in.Name
		if _, isParent := t.kids[name]; isParent && name != parent {
			t.shareAmong(name, sharePool{amount: t.shares[k].amount, names: t.shares[k].names})
			t.keepOwn(k)
		}
	}
}

// shareResource shares pool's n among the kids that cover n and do not state it.
// A kid whose share has no known size (no nodes) is listed in unknown instead.
func (t *volcanoTree) shareResource(n resources.Name, kids []int, pool sharePool, unknown map[int][]resources.Name) {
	avail, known := pool.amount[n]
	var claims []weightClaim
	var who []int
	for _, k := range kids {
		if !hasName(t.shares[k].names, n) {
			continue
		}
		if a, ok := t.amounts[k].stated(n); ok {
			avail -= a
			continue
		}
		if pool.noNodes && !known {
			unknown[k] = append(unknown[k], n)
			continue
		}
		c := weightClaim{weight: volcanoWeight(t.qs[k])}
		c.cap, c.capped = t.amounts[k].capability[n]
		claims, who = append(claims, c), append(who, k)
	}
	for i, a := range waterFill(max(avail, 0), claims) {
		t.shares[who[i]].amount[n] = a
		t.shares[who[i]].derived[n] = true
	}
}

// keepOwn sets a parent's own quota once its children's are known: of each resource
// that the parent or a child shares by weight, what the children do not hold.
func (t *volcanoTree) keepOwn(p int) {
	s := &t.shares[p]
	s.own = resources.Vector{}
	for _, n := range s.names {
		s.own[n] = s.amount[n]
		held, shared := resources.Amount(0), s.derived[n]
		for _, k := range t.kids[t.qs[p].in.Name] {
			held = resources.SatAdd(held, t.shares[k].amount[n])
			shared = shared || t.shares[k].derived[n]
		}
		if shared {
			s.own[n] = max(s.amount[n]-held, 0)
		}
	}
}

// reportOutsideRoot: a queue whose parents do not lead to root (a parent that is no
// Queue of the inputs, or parents in a cycle) has no pool to take a weight share from.
func (t *volcanoTree) reportOutsideRoot() {
	for i, q := range t.qs {
		if t.visited[i] || !t.amounts[i].needsShare() {
			continue
		}
		q.c.add("spec.parent", "parent %q does not lead to Volcano's root queue (no Queue of that name among the inputs, or parents in a cycle), so the queue has no pool to take a share of by its weight: set spec.deserved", q.in.Spec.Parent)
	}
}

// reportNoNodes: the queue's quota of names (or of everything, weight-only) is a share
// of the cluster by weight, and the inputs have no nodes.
func (t *volcanoTree) reportNoNodes(k int, names []resources.Name) {
	q := t.qs[k]
	const how = "give the cluster's nodes (v1 Nodes or NodePools) with the queues"
	if q.implicitField != "" {
		q.c.add(q.implicitField, "Volcano Queue %q is not among the inputs, so Gantry stands in Volcano's own default queue (weight 1, reclaimable), whose quota is a share of the cluster by weight, and the inputs have no nodes: %s, or a Queue %q with spec.deserved", q.in.Name, how, q.in.Name)
		return
	}
	what := "not set (nor guarantee or capability)"
	if len(names) > 0 {
		what = "not set for " + joinNames(names)
	}
	q.c.add("spec.deserved", "%s: Volcano gives such a queue a share of the cluster by its weight, and the inputs have no nodes: %s, or set spec.deserved", what, how)
}

func unionNames(shares []volcanoShare, idx []int) []resources.Name {
	seen := map[resources.Name]bool{}
	var out []resources.Name
	for _, i := range idx {
		for _, n := range shares[i].names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func hasName(names []resources.Name, n resources.Name) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

func joinNames(names []resources.Name) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}
