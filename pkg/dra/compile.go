package dra

import (
	"fmt"
	"slices"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"
)

// Compile compiles the claims of one pod: every request's class and selectors (the
// device kind and, for MIG, the profile they pick), the constraints and the configs'
// request names. The first problem is an *Error naming the claim and the field.
//
// The claims of a pod become one devices.Request, so the requests that consume devices
// must all ask for whole GPUs or all for MIG instances (MIG profiles may differ).
func (c *Classes) Compile(claims []ClaimSpec) (*PodClaims, error) {
	pc := &PodClaims{classes: c}
	for i := range claims {
		if err := c.compileClaim(pc, &claims[i]); err != nil {
			return nil, err
		}
	}
	if err := pc.checkKinds(); err != nil {
		return nil, err
	}
	if err := pc.checkAlternatives(); err != nil {
		return nil, err
	}
	if err := pc.computeQuota(); err != nil {
		return nil, err
	}
	pc.finish()
	return pc, nil
}

// compileClaim adds one claim's requests and constraints to pc.
func (c *Classes) compileClaim(pc *PodClaims, cs *ClaimSpec) error {
	if cs.Name == "" {
		return claimError("(unnamed)", "name", "a pod claim needs a name")
	}
	if slices.ContainsFunc(pc.claims, func(o compiledClaim) bool { return o.name == cs.Name }) {
		return claimError(cs.Name, "name", "the pod names the claim twice")
	}
	ci := len(pc.claims)
	pc.claims = append(pc.claims, compiledClaim{name: cs.Name, shared: cs.Shared, spec: &cs.Spec})
	dc := &cs.Spec.Devices
	var seen []string
	for i := range dc.Requests {
		field := fmt.Sprintf("spec.devices.requests[%d]", i)
		r := &dc.Requests[i]
		if r.Name == "" || slices.Contains(seen, r.Name) {
			return claimError(cs.Name, field+".name", "request name %q is empty or given twice", r.Name)
		}
		seen = append(seen, r.Name)
		p, err := c.compileRequest(cs.Name, ci, field, r)
		if err != nil {
			return err
		}
		pc.parts = append(pc.parts, p)
	}
	known := requestNames(&cs.Spec)
	for i, k := range dc.Constraints {
		cons, err := compileConstraint(cs.Name, ci, i, k, known)
		if err != nil {
			return err
		}
		pc.constraints = append(pc.constraints, cons)
	}
	for i, cfg := range dc.Config {
		if err := checkNames(cs.Name, fmt.Sprintf("spec.devices.config[%d].requests", i), cfg.Requests, known); err != nil {
			return err
		}
	}
	return nil
}

// compileConstraint compiles constraint i of a claim: matchAttribute only.
func compileConstraint(claim string, ci, i int, k resourcev1.DeviceConstraint, known []string) (constraint, error) {
	field := fmt.Sprintf("spec.devices.constraints[%d]", i)
	if k.DistinctAttribute != nil {
		return constraint{}, claimError(claim, field+".distinctAttribute", "not supported: Gantry allocates whole devices, use matchAttribute")
	}
	if k.MatchAttribute == nil || *k.MatchAttribute == "" {
		return constraint{}, claimError(claim, field+".matchAttribute", "a constraint needs matchAttribute")
	}
	if err := checkNames(claim, field+".requests", k.Requests, known); err != nil {
		return constraint{}, err
	}
	return constraint{claim: ci, index: i, attr: *k.MatchAttribute, requests: k.Requests, field: field}, nil
}

// compileRequest compiles request r (exactly, or firstAvailable's subrequests).
func (c *Classes) compileRequest(claim string, ci int, field string, r *resourcev1.DeviceRequest) (part, error) {
	p := part{claim: ci, request: r.Name, field: field}
	switch {
	case r.Exactly != nil && len(r.FirstAvailable) > 0:
		return part{}, claimError(claim, field, "exactly and firstAvailable are mutually exclusive")
	case r.Exactly != nil:
		e := r.Exactly
		p.admin = ptr.Deref(e.AdminAccess, false)
		err := c.addAlternative(&p, claim, field+".exactly", subRequest{class: e.DeviceClassName, selectors: e.Selectors, mode: e.AllocationMode, count: e.Count, capacity: e.Capacity != nil})
		return p, err
	case len(r.FirstAvailable) == 0:
		return part{}, claimError(claim, field, "a request needs exactly or firstAvailable")
	}
	for k, s := range r.FirstAvailable {
		f := fmt.Sprintf("%s.firstAvailable[%d]", field, k)
		if s.Name == "" {
			return part{}, claimError(claim, f+".name", "a subrequest needs a name")
		}
		err := c.addAlternative(&p, claim, f, subRequest{name: s.Name, class: s.DeviceClassName, selectors: s.Selectors, mode: s.AllocationMode, count: s.Count, capacity: s.Capacity != nil})
		if err != nil {
			return part{}, err
		}
	}
	return p, nil
}

// subRequest is what exactly and a firstAvailable entry share.
type subRequest struct {
	name, class string
	selectors   []resourcev1.DeviceSelector
	mode        resourcev1.DeviceAllocationMode
	count       int64
	capacity    bool
}

// addAlternative compiles one way of meeting p. Every alternative of a part must take
// the same number of devices of the same kind (and MIG profile): Gantry places a pod
// with one device request.
func (c *Classes) addAlternative(p *part, claim, field string, s subRequest) error {
	count, all, err := requestCount(claim, field, s)
	if err != nil {
		return err
	}
	dc, ok := c.byName[s.class]
	if !ok {
		return claimError(claim, field+".deviceClassName", "DeviceClass %q not found", s.class)
	}
	own, f, why := compileSelectors(c.cache, s.selectors, "", field+".selectors")
	if why != "" {
		return claimError(claim, f, "%s", why)
	}
	sels := append(slices.Clone(dc.selectors), own...)
	kind, profile, why := c.kindOf(sels)
	if why != "" {
		return claimError(claim, field, "DeviceClass %s with the request's selectors %s", s.class, why)
	}
	if len(p.alts) > 0 && (kind != p.kind || profile != p.profile || count != p.count || all != p.all) {
		return claimError(claim, field, "takes %s %s (%s) where the first subrequest takes %s %s (%s): Gantry needs one device count and kind per request",
			countWords(count, all), kind, profile, countWords(p.count, p.all), p.kind, p.profile)
	}
	p.count, p.all, p.kind, p.profile = count, all, kind, profile
	p.alts = append(p.alts, alternative{sub: s.name, class: dc, selectors: sels, field: field})
	return nil
}

// requestCount is the device count of a request: count (1 when unset) for ExactCount;
// for All (every matching device of the node it is allocated on) 1, the least it takes
// anywhere, and all set.
func requestCount(claim, field string, s subRequest) (int64, bool, error) {
	all := false
	switch s.mode {
	case resourcev1.DeviceAllocationModeAll:
		if s.count != 0 {
			return 0, false, claimError(claim, field+".count", "must not be set with allocationMode All (it takes every matching device)")
		}
		all = true
	case "", resourcev1.DeviceAllocationModeExactCount:
	default:
		return 0, false, claimError(claim, field+".allocationMode", "unknown allocation mode %q", s.mode)
	}
	if s.capacity {
		return 0, false, claimError(claim, field+".capacity", "not supported: Gantry allocates whole devices")
	}
	if s.count < 0 || s.count > resourcev1.AllocationResultsMaxSize {
		return 0, false, claimError(claim, field+".count", "count %d is outside 1..%d", s.count, resourcev1.AllocationResultsMaxSize)
	}
	return max(s.count, 1), all, nil
}

// countWords is a request's count for messages.
func countWords(count int64, all bool) string {
	if all {
		return "every matching"
	}
	return fmt.Sprint(count)
}
