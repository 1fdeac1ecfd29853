package dra

import (
	"strings"
	"sync"

	resourcev1 "k8s.io/api/resource/v1"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// evaluated is what the claims make of one device, computed once per device: per
// alternative of every part (flattened, PodClaims.altIndex) whether the selectors
// match, which selector failed and any runtime error; per constraint the device's
// value of its attribute.
type evaluated struct {
	name   string
	ok     []bool
	failed []int
	errs   []*evalError
	attrs  []attrValue
}

// attrValue is a device attribute in comparable form; present is false when the
// device lacks it.
type attrValue struct {
	present bool
	kind    byte // 's', 'i', 'b', 'v'
	s       string
	i       int64
}

// altIndex is the flattened position of part p's alternative a.
func (pc *PodClaims) altIndex(p, a int) int { return pc.altBase[p] + a }

// evaluate runs every alternative's selectors on d (a device of kind k, MIG profile
// profile) and reads the constraints' attributes.
func (pc *PodClaims) evaluate(d *resourcev1.Device, k deviceKind, profile string) *evaluated {
	e := &evaluated{name: d.Name}
	cd := celDevice(d)
	for i := range pc.parts {
		p := &pc.parts[i]
		for a := range p.alts {
			ok, failed, bad := false, -1, (*evalError)(nil)
			if p.kind == k && (k != kindMIG || sameProfile(p.profile, profile)) {
				failed, bad = matchAll(p.alts[a].selectors, cd)
				ok = failed < 0
			}
			e.ok, e.failed, e.errs = append(e.ok, ok), append(e.failed, failed), append(e.errs, bad)
		}
	}
	for _, c := range pc.constraints {
		e.attrs = append(e.attrs, lookupAttr(d, c.attr))
	}
	return e
}

func sameProfile(a, b string) bool {
	return strings.EqualFold(resources.CanonicalMIGProfile(a), resources.CanonicalMIGProfile(b))
}

// lookupAttr finds a fully qualified attribute as the upstream allocator does: by its
// full name, or, in the driver's domain, by its bare name.
func lookupAttr(d *resourcev1.Device, name resourcev1.FullyQualifiedName) attrValue {
	a, ok := d.Attributes[resourcev1.QualifiedName(name)]
	if !ok {
		domain, id, qualified := strings.Cut(string(name), "/")
		if !qualified || domain != DriverName {
			return attrValue{}
		}
		if a, ok = d.Attributes[resourcev1.QualifiedName(id)]; !ok {
			return attrValue{}
		}
	}
	switch {
	case a.StringValue != nil:
		return attrValue{present: true, kind: 's', s: *a.StringValue}
	case a.IntValue != nil:
		return attrValue{present: true, kind: 'i', i: *a.IntValue}
	case a.BoolValue != nil && *a.BoolValue:
		return attrValue{present: true, kind: 'b', i: 1}
	case a.BoolValue != nil:
		return attrValue{present: true, kind: 'b'}
	case a.VersionValue != nil:
		return attrValue{present: true, kind: 'v', s: *a.VersionValue}
	}
	return attrValue{}
}

// candidateKey is everything DeviceFor reads of a GPU and instance, so candidates with
// one key evaluate alike.
type candidateKey struct {
	model               devices.ModelID
	uuid                string
	index, nvlink, pcie int
	profile             string
	start               int
	mig                 bool
}

func keyOf(c *devices.Candidate) candidateKey {
	g := c.GPU
	k := candidateKey{model: g.Model, uuid: g.UUID, index: g.Index, nvlink: g.NVLinkDomain, pcie: g.PCIeSwitch}
	if c.Instance != nil {
		k.mig, k.profile, k.start = true, c.Instance.Profile, c.Instance.Start
	}
	return k
}

// memoLimit bounds a memo: past it, it starts over.
const memoLimit = 4096

// evalMemo remembers evaluated devices by candidate key: Fit asks about the same GPUs
// again whenever their node changes, and CEL is the costly part. It is the one mutable
// part of a PodClaims, guarded for sharing.
type evalMemo struct {
	mu sync.Mutex
	m  map[candidateKey]*evaluated
}

func newEvalMemo() *evalMemo { return &evalMemo{m: map[candidateKey]*evaluated{}} }

// evaluateCandidate is evaluate for a devices.Candidate, through the memo.
func (pc *PodClaims) evaluateCandidate(c *devices.Candidate) *evaluated {
	k := keyOf(c)
	pc.memo.mu.Lock()
	e, ok := pc.memo.m[k]
	pc.memo.mu.Unlock()
	if ok {
		return e
	}
	d := DeviceFor(*c.GPU, c.Instance)
	kind, profile := kindGPU, ""
	if c.Instance != nil {
		kind, profile = kindMIG, c.Instance.Profile
	}
	e = pc.evaluate(&d, kind, profile)
	pc.memo.mu.Lock()
	if len(pc.memo.m) >= memoLimit {
		pc.memo.m = map[candidateKey]*evaluated{}
	}
	pc.memo.m[k] = e
	pc.memo.mu.Unlock()
	return e
}
