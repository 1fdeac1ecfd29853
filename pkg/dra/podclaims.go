package dra

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// PodClaims are one pod's claims compiled: what its device request is, what it counts
// against quota and how an assignment of devices splits into per-claim allocations.
// A PodClaims is read-only once compiled and safe to share between goroutines.
type PodClaims struct {
	classes     *Classes
	claims      []compiledClaim
	parts       []part
	constraints []constraint
	kind        deviceKind // of the parts that consume devices; 0 when none does
	// sized: some consuming part takes All, so the filter sees the held devices.
	sized bool
	key   string
	quota resources.Vector
	memo  *evalMemo
	// altBase is where each part's alternatives start in the flattened lists of
	// evaluated.
	altBase []int
}

// maxAlternativeCombos bounds the firstAvailable choices a pod's requests multiply to:
// each is tried in turn on every node.
const maxAlternativeCombos = 64

// checkKinds refuses a pod whose device-consuming requests ask for different kinds.
func (pc *PodClaims) checkKinds() error {
	first := -1
	for i := range pc.parts {
		p := &pc.parts[i]
		if p.admin {
			continue
		}
		if first < 0 {
			first, pc.kind = i, p.kind
			continue
		}
		if p.kind != pc.kind {
			f := &pc.parts[first]
			return claimError(pc.claims[p.claim].name, p.field, "asks for %s devices where claim %s %s asks for %s: a pod's claims take one kind of device (whole GPUs or MIG instances)",
				p.kind, pc.claims[f.claim].name, f.field, f.kind)
		}
	}
	return nil
}

// checkAlternatives bounds the number of firstAvailable combinations.
func (pc *PodClaims) checkAlternatives() error {
	n := 1
	for i := range pc.parts {
		if n *= len(pc.parts[i].alts); n > maxAlternativeCombos {
			p := &pc.parts[i]
			return claimError(pc.claims[p.claim].name, p.field+".firstAvailable", "the pod's requests have more than %d combinations of subrequests", maxAlternativeCombos)
		}
	}
	return nil
}

// computeQuota adds up what the consuming requests count as. Every alternative of a
// request must count as the same resource: quota is charged before a node is chosen.
func (pc *PodClaims) computeQuota() error {
	pc.quota = resources.Vector{}
	for i := range pc.parts {
		p := &pc.parts[i]
		if p.admin {
			continue
		}
		var name resources.Name
		for a, alt := range p.alts {
			n := pc.classes.quotaName(alt.class.name, p.kind, p.profile)
			if n == "" {
				return claimError(pc.claims[p.claim].name, alt.field+".deviceClassName", "DeviceClass %s is mapped to a per-profile MIG resource but the request takes whole GPUs", alt.class.name)
			}
			if a > 0 && n != name {
				return claimError(pc.claims[p.claim].name, alt.field+".deviceClassName", "counts as %s where the first subrequest counts as %s: quota needs one resource per request", n, name)
			}
			name = n
		}
		n, err := pc.charge(p)
		if err != nil {
			return err
		}
		pc.quota[name] = resources.SatAdd(pc.quota[name], resources.Amount(n))
	}
	return nil
}

// charge is what consuming part p counts against quota: its count, or for All the
// most it could take on one node of the cluster (allmode.go).
func (pc *PodClaims) charge(p *part) (int64, error) {
	if !p.all {
		return p.count, nil
	}
	pc.sized = true
	field := p.alts[0].field + ".allocationMode"
	if !pc.classes.nodesGiven {
		return 0, claimError(pc.claims[p.claim].name, field, "All is charged the most devices it could take on one node, and these DeviceClasses were compiled without the cluster's nodes (dra.WithNodes)")
	}
	n := pc.classes.allCharge(p)
	if n == 0 {
		return 0, claimError(pc.claims[p.claim].name, field, "All: no node of the cluster has a %s device the request's selectors match, so it can never be allocated", p.kind)
	}
	return n, nil
}

// finish computes the key once.
func (pc *PodClaims) finish() {
	pc.memo = newEvalMemo()
	n := 0
	for i := range pc.parts {
		pc.altBase = append(pc.altBase, n)
		n += len(pc.parts[i].alts)
	}
	var b strings.Builder
	b.WriteString("dra")
	for i := range pc.parts {
		p := &pc.parts[i]
		fmt.Fprintf(&b, "|%d:%s:%t:%t:%d:%s", p.claim, p.request, p.admin, p.all, p.count, p.profile)
		for _, a := range p.alts {
			fmt.Fprintf(&b, "[%s:%s", a.sub, a.class.name)
			for _, s := range a.selectors {
				fmt.Fprintf(&b, ";%q", s.expr)
			}
			b.WriteString("]")
		}
	}
	for _, c := range pc.constraints {
		fmt.Fprintf(&b, "|c%d:%s:%q", c.claim, c.attr, c.requests)
	}
	pc.key = b.String()
}

// Key identifies what the pod's claims ask for: equal keys, equal requests and picks.
func (pc *PodClaims) Key() string { return pc.key }

// Request is the pod's device request: the devices its claims consume (admin-access
// requests consume none) as whole GPUs or MIG instances per profile, with the claims as
// its filter. A pod whose claims consume nothing has the zero request. An
// allocationMode All request counts 1 here, the least it takes: its filter is a
// devices.SizedFilter, and Fit's assignment holds every device it matches.
func (pc *PodClaims) Request() devices.Request {
	var r devices.Request
	perProfile := map[string]int64{}
	for i := range pc.parts {
		p := &pc.parts[i]
		switch {
		case p.admin:
		case p.kind == kindGPU:
			r.Units += p.count
		default:
			perProfile[p.profile] += p.count
		}
	}
	for prof, n := range perProfile {
		r.MIG = append(r.MIG, devices.MIGCount{Profile: prof, Count: n})
	}
	sort.Slice(r.MIG, func(i, j int) bool { return r.MIG[i].Profile < r.MIG[j].Profile })
	if !r.IsZero() {
		r.Filter = pc.filter(nil)
	}
	return r
}

// Quota is what one pod's claims count against quota through the class mappings: one
// unit per device of each consuming request (admin-access requests count nothing; an
// allocationMode All request the most devices it could take on one node). A shared
// claim counts for every pod that names it, as each pod's requests do.
func (pc *PodClaims) Quota() resources.Vector { return pc.quota.Clone() }

// Claims lists the pod's claim names, in the order given to Compile.
func (pc *PodClaims) Claims() []string {
	out := make([]string, len(pc.claims))
	for i, c := range pc.claims {
		out[i] = c.name
	}
	return out
}
