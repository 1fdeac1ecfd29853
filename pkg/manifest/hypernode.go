package manifest

import (
	"regexp"

	"github.com/gantry-sched/gantry/pkg/api"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// volcanoInputs are the Volcano inputs resolved once every file is read: the HyperNodes
// (their members name nodes and other HyperNodes of any file) and the networkTopology
// requests, whose tiers only mean something once the HyperNodes are known.
type volcanoInputs struct {
	hyperNodes []*hyperNodeInput
	requests   []volcanoRequest
}

// volcanoRequest is one networkTopology read: the requests made from it (one per pod
// set; none for a spec that is only checked) and the tier name it gives, if any.
type volcanoRequest struct {
	reqs     []*api.TopologyRequest
	tierName string
	path     string // of the networkTopology, for errors
	c        errs
}

// hyperNodeInput is one HyperNode read, its members checked and compiled.
type hyperNodeInput struct {
	meta     api.Meta
	tier     int32
	tierName string
	members  []memberMatcher
	c        errs
}

// memberMatcher selects nodes (or HyperNodes) by exact name, name pattern or labels.
type memberMatcher struct {
	hyperNode bool
	path      string // spec.members[i]
	exact     string
	regex     *regexp.Regexp
	labels    labels.Selector
}

func (m memberMatcher) matchName(name string) bool {
	switch {
	case m.exact != "":
		return name == m.exact
	case m.regex != nil:
		return m.regex.MatchString(name) // unanchored, as Volcano matches
	}
	return false
}

// hyperNode reads a topology.volcano.sh/v1alpha1 HyperNode strictly; its members are
// resolved with every file read (resolveHyperNodes).
func (l *loader) hyperNode(d document, c errs) {
	var in hyperNodeWire
	if !decode(d, &in, false, c) {
		return
	}
	clusterScoped(in.ObjectMeta, c)
	m := metaOf(in.ObjectMeta, c.src, "")
	h := &hyperNodeInput{meta: m, tier: in.Spec.Tier, tierName: in.Spec.TierName, c: c}
	if h.tier < 1 {
		c.add("spec.tier", "%d: a HyperNode's tier must be 1 or more (1 is the narrowest)", h.tier)
	}
	for i, mem := range in.Spec.Members {
		if mm, ok := readMember(mem, joinIndex("spec.members", i), c); ok {
			h.members = append(h.members, mm)
		}
	}
	if l.register("HyperNode", m, c) {
		l.volcano.hyperNodes = append(l.volcano.hyperNodes, h)
	}
}

// readMember checks one member: type Node or HyperNode and exactly one selector
// (labelMatch only for nodes, as in Volcano).
func readMember(mem hyperNodeMember, path string, c errs) (memberMatcher, bool) {
	m := memberMatcher{path: path}
	ok := true
	switch mem.Type {
	case "Node":
	case "HyperNode":
		m.hyperNode = true
	case "":
		c.add(path+".type", "missing: Node or HyperNode")
		ok = false
	default:
		c.add(path+".type", "unknown member type %q: want Node or HyperNode", mem.Type)
		ok = false
	}
	sel, sp := mem.Selector, path+".selector"
	n := 0
	if sel.ExactMatch != nil {
		n++
		m.exact = sel.ExactMatch.Name
		if m.exact == "" {
			c.add(sp+".exactMatch.name", "missing: the name of the member")
			ok = false
		}
	}
	if sel.RegexMatch != nil {
		n++
		re, err := regexp.Compile(sel.RegexMatch.Pattern)
		switch {
		case sel.RegexMatch.Pattern == "":
			c.add(sp+".regexMatch.pattern", "missing: a pattern for the members' names")
			ok = false
		case err != nil:
			c.add(sp+".regexMatch.pattern", "invalid pattern: %v", err)
			ok = false
		}
		m.regex = re
	}
	if sel.LabelMatch != nil {
		n++
		ok = readLabelMatch(&m, sel.LabelMatch, sp+".labelMatch", c) && ok
	}
	if n != 1 {
		c.add(sp, "give exactly one of exactMatch, regexMatch or labelMatch (got %d)", n)
		ok = false
	}
	return m, ok
}

func readLabelMatch(m *memberMatcher, ls *metav1.LabelSelector, path string, c errs) bool {
	if m.hyperNode {
		c.add(path, "labelMatch selects nodes only: a HyperNode member is named by exactMatch or regexMatch")
		return false
	}
	if len(ls.MatchLabels) == 0 && len(ls.MatchExpressions) == 0 {
		// An empty selector would take every node of the cluster into one HyperNode.
		c.add(path, "empty selector: give matchLabels or matchExpressions")
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		c.add(path, "invalid selector: %v", err)
		return false
	}
	m.labels = s
	return true
}
