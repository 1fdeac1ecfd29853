package placement

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// ReasonCount is how many nodes were rejected for one reason (Key groups them); Example
// is one of those rejections, with its numbers.
type ReasonCount struct {
	Key     string
	Example Rejection
	Nodes   int
}

// NearMiss is the node that came closest: the fewest rejections for the failing pod.
type NearMiss struct {
	Node       string
	Rejections []Rejection
}

// Diagnosis explains why a workload's gang could not be placed. Each node is counted
// once, under the first reason it fails (checks run in Reason order), so the counts sum
// to TotalNodes - FitNodes.
type Diagnosis struct {
	Workload api.WorkloadID
	// PodSet and Pod name the first gang pod that found no node.
	PodSet string
	Pod    int
	// Placed is how many gang pods had been placed (then undone) before the failure;
	// GangSize the number the gang needs.
	Placed, GangSize int
	// TotalNodes is the number of nodes considered; FitNodes how many could take the
	// failing pod on their own (non-zero when the gang failed on topology or size).
	TotalNodes, FitNodes int
	Counts               []ReasonCount
	NearMiss             *NearMiss
	// Topology explains a topology failure (empty otherwise), e.g.
	// "no rack domain has room for 4 pods (best r7: 3)".
	Topology string
	// Err is set when the workload itself is invalid (e.g. an unparsable GPU request);
	// it is reported as a diagnosis, since not fitting is a value.
	Err string
}

// String renders the diagnosis for humans, e.g.
// "ns/w: pod set main pod 0: 0 of 40 nodes fit: 31 too few free GPUs, 6 taint spot=true:NoSchedule, 3 topology rack".
func (d *Diagnosis) String() string {
	if d == nil {
		return "fits"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: pod set %s pod %d", d.Workload, d.PodSet, d.Pod)
	if d.Err != "" {
		fmt.Fprintf(&b, ": invalid: %s", d.Err)
		return b.String()
	}
	fmt.Fprintf(&b, ": %d of %d nodes fit", d.FitNodes, d.TotalNodes)
	for i, c := range d.Counts {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%s%d %s", sep, c.Nodes, c.Example.phrase())
	}
	if d.GangSize > 1 {
		fmt.Fprintf(&b, "; gang %d of %d pods placed", d.Placed, d.GangSize)
	}
	if d.Topology != "" {
		fmt.Fprintf(&b, "; %s", d.Topology)
	}
	if d.NearMiss != nil {
		parts := make([]string, len(d.NearMiss.Rejections))
		for i, r := range d.NearMiss.Rejections {
			parts[i] = r.String()
		}
		fmt.Fprintf(&b, "; nearest: %s (%s)", d.NearMiss.Node, strings.Join(parts, "; "))
	}
	return b.String()
}

// tally counts first rejections per key, sorted by count (desc) then key. It groups by
// what the key is made of, rendering the key once per group, not once per node.
type tally struct {
	by map[tallyKey]*ReasonCount
}

type tallyKey struct {
	reason   Reason
	resource resources.Name
	subject  string
}

func (t *tally) add(r Rejection) {
	if t.by == nil {
		t.by = map[tallyKey]*ReasonCount{}
	}
	k := tallyKeyOf(r)
	if c, ok := t.by[k]; ok {
		c.Nodes++
		return
	}
	t.by[k] = &ReasonCount{Key: r.Key(), Example: r, Nodes: 1}
}

// tallyKeyOf is what r is counted under: its reason and resource, or its subject
// when it names no resource.
func tallyKeyOf(r Rejection) tallyKey {
	if r.Claim != nil { // counted per claim, request and reason (claimKey)
		return tallyKey{reason: r.Reason, subject: claimKey(r.Claim)}
	}
	k := tallyKey{reason: r.Reason, resource: r.Resource}
	if r.Resource == "" {
		k.subject = r.Subject
	}
	return k
}

func (t *tally) sorted() []ReasonCount {
	out := make([]ReasonCount, 0, len(t.by))
	for _, c := range t.by {
		out = append(out, *c)
	}
	sortCounts(out)
	return out
}

// sortCounts orders reasons by nodes, most first, then by key.
func sortCounts(out []ReasonCount) {
	sort.Slice(out, func(i, j int) bool {
		if out[i].Nodes != out[j].Nodes {
			return out[i].Nodes > out[j].Nodes
		}
		return out[i].Key < out[j].Key
	})
}
