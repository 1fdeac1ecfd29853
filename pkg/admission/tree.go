package admission

import (
	"fmt"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// noLimit marks an absent borrowing or lending limit in the dense quota arrays.
const noLimit resources.Amount = -1

// nodeID indexes Quota's nodes: ClusterQueues first (sorted by name), then cohorts
// (sorted by name). Flat arrays indexed by nodeID × frID keep Clone cheap.
type nodeID int32

// frID indexes the flavor-resource table shared by every node.
type frID int32

const noNode nodeID = -1

// treeNode is the immutable part of a ClusterQueue or cohort.
type treeNode struct {
	name     string
	isCQ     bool
	parent   nodeID
	children []nodeID
	weight   int64 // fairSharing weight in thousandths
	cq       *api.ClusterQueue
}

// structure is what every clone of a Quota shares: names, tree shape, quotas.
type structure struct {
	nodes   []treeNode
	byName  map[string]nodeID // "cq:<name>" and "cohort:<name>"
	cqs     map[string]nodeID // ClusterQueues by plain name (cqID: no key to build per look-up)
	frs     []FlavorResource
	frIndex map[FlavorResource]frID
	flavors map[string]*api.ResourceFlavor
	// Dense per node × fr: nominal, limits (noLimit when absent), subtree quota,
	// guaranteed (the part of the subtree quota not lent to the parent).
	nominal, borrowLimit, lendLimit, subtree, guaranteed []resources.Amount
	// resources are the distinct resource names of frs (sorted); resOf maps a cell to
	// its index there. lendable[node × resource] is the most a node could lend, over
	// all flavors: the denominator of dominant resource shares.
	resources []resources.Name
	resOf     []int
	lendable  []resources.Amount
	// rootOf is the top of each node's cohort tree (the node itself without a cohort).
	rootOf []nodeID
	// height is each node's distance to its furthest leaf (Kueue's node height; 0 for
	// a ClusterQueue), the borrowing level of quota found at that node.
	height []int
	// treeCQs lists, per root node, the ClusterQueues of its tree.
	treeCQs map[nodeID][]nodeID
	// covered[cq] is the set of resources the ClusterQueue's groups cover.
	covered map[nodeID]map[resources.Name]int // resource -> resource group index
	acct    GPUAccounting
	exclude []string
	fair    FairSharingConfig
	// objs and opts are what the structure was built from, for WithResourceGroups.
	objs api.Objects
	opts Options
}

func (s *structure) idx(n nodeID, f frID) int { return int(n)*len(s.frs) + int(f) }

// cqID returns the node of ClusterQueue name.
func (s *structure) cqID(name string) (nodeID, bool) {
	id, ok := s.cqs[name]
	return id, ok
}

func newStructure(objs *api.Objects, acct GPUAccounting) (*structure, error) {
	s := &structure{
		byName:  map[string]nodeID{},
		cqs:     map[string]nodeID{},
		frIndex: map[FlavorResource]frID{},
		flavors: map[string]*api.ResourceFlavor{},
		covered: map[nodeID]map[resources.Name]int{},
		acct:    acct,
	}
	// Own copies, so later changes to the caller's objects cannot change decisions.
	for i := range objs.Flavors {
		f := objs.Flavors[i]
		s.flavors[f.Name] = &f
	}
	cqs := make([]*api.ClusterQueue, len(objs.ClusterQueues))
	for i := range objs.ClusterQueues {
		cq := objs.ClusterQueues[i]
		cqs[i] = &cq
	}
	sort.Slice(cqs, func(i, j int) bool { return cqs[i].Name < cqs[j].Name })
	for _, cq := range cqs {
		if _, dup := s.byName["cq:"+cq.Name]; dup {
			return nil, fmt.Errorf("clusterqueue %q (%s): defined twice", cq.Name, cq.Source)
		}
		w, err := weightOf(cq.FairSharing, fmt.Sprintf("clusterqueue %q", cq.Name))
		if err != nil {
			return nil, err
		}
		s.byName["cq:"+cq.Name] = nodeID(len(s.nodes))
		s.cqs[cq.Name] = nodeID(len(s.nodes))
		s.nodes = append(s.nodes, treeNode{name: cq.Name, isCQ: true, parent: noNode, weight: w, cq: cq})
	}
	cohorts, err := collectCohorts(objs)
	if err != nil {
		return nil, err
	}
	for _, name := range sortedKeys(cohorts) {
		c := cohorts[name]
		s.byName["cohort:"+name] = nodeID(len(s.nodes))
		w, err := weightOf(cohortFairSharing(c), fmt.Sprintf("cohort %q", name))
		if err != nil {
			return nil, err
		}
		s.nodes = append(s.nodes, treeNode{name: name, parent: noNode, weight: w})
	}
	s.link(cqs, cohorts)
	if err := s.checkAcyclic(); err != nil {
		return nil, err
	}
	s.rootOf = make([]nodeID, len(s.nodes))
	for n := range s.nodes {
		r := nodeID(n)
		for s.nodes[r].parent != noNode {
			r = s.nodes[r].parent
		}
		s.rootOf[n] = r
	}
	s.computeHeight()
	s.treeCQs = map[nodeID][]nodeID{}
	for n := range s.nodes {
		if s.nodes[n].isCQ {
			s.treeCQs[s.rootOf[n]] = append(s.treeCQs[s.rootOf[n]], nodeID(n))
		}
	}
	if err := s.buildFRs(cqs, cohorts); err != nil {
		return nil, err
	}
	if err := s.fillQuotas(cqs, cohorts); err != nil {
		return nil, err
	}
	s.computeSubtree()
	s.computeLendable()
	return s, nil
}

// computeHeight fills height: a cohort with children is at least 1, and one more than
// its highest child cohort.
func (s *structure) computeHeight() {
	s.height = make([]int, len(s.nodes))
	var visit func(n nodeID) int
	visit = func(n nodeID) int {
		h := min(len(s.nodes[n].children), 1)
		for _, c := range s.nodes[n].children {
			if !s.nodes[c].isCQ {
				h = max(h, visit(c)+1)
			}
		}
		s.height[n] = h
		return h
	}
	for n := range s.nodes {
		if s.nodes[n].parent == noNode {
			visit(nodeID(n))
		}
	}
}

// computeLendable fills resources, resOf and lendable (see structure).
func (s *structure) computeLendable() {
	index := map[resources.Name]int{}
	for _, fr := range s.frs {
		if _, ok := index[fr.Resource]; !ok {
			index[fr.Resource] = 0
			s.resources = append(s.resources, fr.Resource)
		}
	}
	sort.Slice(s.resources, func(i, j int) bool { return s.resources[i] < s.resources[j] })
	for i, r := range s.resources {
		index[r] = i
	}
	s.resOf = make([]int, len(s.frs))
	for f, fr := range s.frs {
		s.resOf[f] = index[fr.Resource]
	}
	s.lendable = make([]resources.Amount, len(s.nodes)*len(s.resources))
	for n := range s.nodes {
		for f := range s.frs {
			i := n*len(s.resources) + s.resOf[f]
			s.lendable[i] = resources.SatAdd(s.lendable[i], s.potential(nodeID(n), frID(f)))
		}
	}
}

// weightOf checks a fair-sharing weight. 0 is Kueue's explicit weight 0 (the queue
// only gets what nobody else wants); the loader fills the default weight 1 (1000).
func weightOf(f api.FairSharing, who string) (int64, error) {
	if f.WeightMilli < 0 {
		return 0, fmt.Errorf("%s: fairSharing.weight: %d thousandths is negative", who, f.WeightMilli)
	}
	return f.WeightMilli, nil
}

// cohortFairSharing is a cohort's fair sharing; implicit cohorts get weight 1.
func cohortFairSharing(c *api.Cohort) api.FairSharing {
	if c == nil {
		return api.FairSharing{WeightMilli: 1000}
	}
	return c.FairSharing
}

// collectCohorts returns every cohort by name: defined ones, and implicit ones (nil)
// named only by a ClusterQueue's cohort field or a Cohort's parent.
func collectCohorts(objs *api.Objects) (map[string]*api.Cohort, error) {
	out := map[string]*api.Cohort{}
	for i := range objs.Cohorts {
		c := &objs.Cohorts[i]
		if prev, dup := out[c.Name]; dup && prev != nil {
			return nil, fmt.Errorf("cohort %q (%s): defined twice", c.Name, c.Source)
		}
		out[c.Name] = c
	}
	for i := range objs.Cohorts {
		if p := objs.Cohorts[i].Parent; p != "" {
			if _, ok := out[p]; !ok {
				out[p] = nil
			}
		}
	}
	for i := range objs.ClusterQueues {
		if c := objs.ClusterQueues[i].Cohort; c != "" {
			if _, ok := out[c]; !ok {
				out[c] = nil
			}
		}
	}
	return out, nil
}

func (s *structure) link(cqs []*api.ClusterQueue, cohorts map[string]*api.Cohort) {
	setParent := func(child nodeID, parent string) {
		if parent == "" {
			return
		}
		p := s.byName["cohort:"+parent]
		s.nodes[child].parent = p
		s.nodes[p].children = append(s.nodes[p].children, child)
	}
	for _, cq := range cqs {
		setParent(s.byName["cq:"+cq.Name], cq.Cohort)
	}
	for _, name := range sortedKeys(cohorts) {
		if c := cohorts[name]; c != nil {
			setParent(s.byName["cohort:"+name], c.Parent)
		}
	}
}

func (s *structure) checkAcyclic() error {
	for i := range s.nodes {
		seen := 0
		for n := nodeID(i); n != noNode; n = s.nodes[n].parent {
			if seen++; seen > len(s.nodes) {
				return fmt.Errorf("cohort %q: parent chain forms a cycle", s.nodes[i].name)
			}
		}
	}
	return nil
}

// groupsOf returns the resource groups a node contributes.
func groupsOf(n treeNode, cohorts map[string]*api.Cohort) []api.ResourceGroup {
	if n.isCQ {
		return n.cq.ResourceGroups
	}
	if c := cohorts[n.name]; c != nil {
		return c.ResourceGroups
	}
	return nil
}

func (s *structure) kindName(n nodeID) string {
	if s.nodes[n].isCQ {
		return fmt.Sprintf("clusterqueue %q", s.nodes[n].name)
	}
	return fmt.Sprintf("cohort %q", s.nodes[n].name)
}

func (s *structure) buildFRs(cqs []*api.ClusterQueue, cohorts map[string]*api.Cohort) error {
	set := map[FlavorResource]bool{}
	for n := range s.nodes {
		for gi, g := range groupsOf(s.nodes[n], cohorts) {
			for fi, fq := range g.Flavors {
				if _, ok := s.flavors[fq.Name]; !ok {
					return fmt.Errorf("%s: resourceGroups[%d].flavors[%d].name: ResourceFlavor %q not found", s.kindName(nodeID(n)), gi, fi, fq.Name)
				}
				for _, rq := range fq.Resources {
					set[FlavorResource{fq.Name, rq.Name}] = true
				}
			}
		}
	}
	for fr := range set {
		s.frs = append(s.frs, fr)
	}
	sort.Slice(s.frs, func(i, j int) bool {
		if s.frs[i].Flavor != s.frs[j].Flavor {
			return s.frs[i].Flavor < s.frs[j].Flavor
		}
		return s.frs[i].Resource < s.frs[j].Resource
	})
	for i, fr := range s.frs {
		s.frIndex[fr] = frID(i)
	}
	return nil
}

func (s *structure) fillQuotas(cqs []*api.ClusterQueue, cohorts map[string]*api.Cohort) error {
	size := len(s.nodes) * len(s.frs)
	s.nominal = make([]resources.Amount, size)
	s.borrowLimit = make([]resources.Amount, size)
	s.lendLimit = make([]resources.Amount, size)
	s.subtree = make([]resources.Amount, size)
	s.guaranteed = make([]resources.Amount, size)
	for i := range s.borrowLimit {
		s.borrowLimit[i], s.lendLimit[i] = noLimit, noLimit
	}
	for n := range s.nodes {
		id := nodeID(n)
		cover := map[resources.Name]int{}
		for gi, g := range groupsOf(s.nodes[n], cohorts) {
			for _, r := range g.CoveredResources {
				if prev, dup := cover[r]; dup && prev != gi {
					return fmt.Errorf("%s: resourceGroups[%d].coveredResources: %s is already covered by resourceGroups[%d]", s.kindName(id), gi, r, prev)
				}
				cover[r] = gi
			}
			for fi, fq := range g.Flavors {
				for ri, rq := range fq.Resources {
					path := fmt.Sprintf("%s: resourceGroups[%d].flavors[%d].resources[%d]", s.kindName(id), gi, fi, ri)
					if err := s.setQuota(id, fq.Name, rq, path); err != nil {
						return err
					}
				}
			}
		}
		if s.nodes[n].isCQ {
			s.covered[id] = cover
		}
	}
	return nil
}

func (s *structure) setQuota(n nodeID, flavor string, rq api.ResourceQuota, path string) error {
	i := s.idx(n, s.frIndex[FlavorResource{flavor, rq.Name}])
	if rq.Nominal < 0 {
		return fmt.Errorf("%s.nominalQuota: %s must not be negative", path, rq.Name)
	}
	s.nominal[i] = rq.Nominal
	if rq.BorrowingLimit != nil {
		if *rq.BorrowingLimit < 0 {
			return fmt.Errorf("%s.borrowingLimit: %s must not be negative", path, rq.Name)
		}
		if s.nodes[n].parent == noNode {
			return fmt.Errorf("%s.borrowingLimit: %s has no parent cohort, so there is nothing to borrow from", path, s.kindName(n))
		}
		s.borrowLimit[i] = *rq.BorrowingLimit
	}
	if rq.LendingLimit != nil {
		if *rq.LendingLimit < 0 {
			return fmt.Errorf("%s.lendingLimit: %s must not be negative", path, rq.Name)
		}
		s.lendLimit[i] = *rq.LendingLimit
	}
	return nil
}

// computeSubtree fills subtree quota and guaranteed quota bottom-up, as Kueue does: a
// cohort's subtree quota is its own nominal plus what each child lends to it.
func (s *structure) computeSubtree() {
	var visit func(n nodeID)
	visit = func(n nodeID) {
		for f := range s.frs {
			s.subtree[s.idx(n, frID(f))] = s.nominal[s.idx(n, frID(f))]
		}
		for _, c := range s.nodes[n].children {
			visit(c)
			for f := range s.frs {
				ci := s.idx(c, frID(f))
				s.subtree[s.idx(n, frID(f))] = resources.SatAdd(s.subtree[s.idx(n, frID(f))], s.subtree[ci]-s.guaranteed[ci])
			}
		}
		for f := range s.frs {
			i := s.idx(n, frID(f))
			if s.lendLimit[i] != noLimit {
				s.guaranteed[i] = max(0, s.subtree[i]-s.lendLimit[i])
			}
		}
	}
	for n := range s.nodes {
		if s.nodes[n].parent == noNode {
			visit(nodeID(n))
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
