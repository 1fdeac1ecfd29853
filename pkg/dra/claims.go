package dra

import (
	"fmt"
	"slices"

	resourcev1 "k8s.io/api/resource/v1"
)

// ClaimSpec is one entry of a pod's spec.resourceClaims with the claim spec it resolves
// to: Name is the pod's name for the claim; Shared is set (to the claim's
// namespace/name) when the pod names a ResourceClaim that other pods may name too, and
// empty for a claim of its own made from a ResourceClaimTemplate.
type ClaimSpec struct {
	Name   string
	Shared string
	Spec   resourcev1.ResourceClaimSpec
}

// compiledClaim is one claim of a pod, kept for the results.
type compiledClaim struct {
	name   string
	shared string
	spec   *resourcev1.ResourceClaimSpec
}

// part is one request of one claim: count devices of one kind, chosen by the first of
// its alternatives that can be met (one alternative for exactly, one per subrequest of
// firstAvailable).
type part struct {
	claim   int // index in PodClaims.claims
	request string
	field   string // "spec.devices.requests[i]"
	admin   bool
	count   int64
	// all: allocationMode All, every device of the node its selectors match (count
	// is then 1, the least it takes); sized per node by the matcher.
	all     bool
	kind    deviceKind
	profile string // MIG profile, NVIDIA's spelling
	alts    []alternative
}

// alternative is one way of meeting a part: a class and its selectors.
type alternative struct {
	sub       string // subrequest name; "" for exactly
	class     *deviceClass
	selectors []selector // the class's, then the request's
	field     string     // "spec.devices.requests[i].exactly" or "...firstAvailable[k]"
}

// resultName is the request name an allocation result carries: "req" or "req/sub".
func (p *part) resultName(alt int) string {
	if sub := p.alts[alt].sub; sub != "" {
		return p.request + "/" + sub
	}
	return p.request
}

// constraint is one matchAttribute constraint of a claim.
type constraint struct {
	claim    int
	index    int
	attr     resourcev1.FullyQualifiedName
	requests []string // empty: every request of the claim
	field    string
}

// covers reports whether the constraint applies to part p met by alternative alt, as
// the upstream allocator decides: the claim's constraint names the request or the
// "request/subrequest".
func (c *constraint) covers(p *part, alt int) bool {
	if p.claim != c.claim || p.admin {
		return false
	}
	return len(c.requests) == 0 || slices.Contains(c.requests, p.request) ||
		(p.alts[alt].sub != "" && slices.Contains(c.requests, p.resultName(alt)))
}

// requestNames lists what a claim's constraints and configs may name: its requests and
// their "request/subrequest".
func requestNames(spec *resourcev1.ResourceClaimSpec) []string {
	var out []string
	for _, r := range spec.Devices.Requests {
		out = append(out, r.Name)
		for _, s := range r.FirstAvailable {
			out = append(out, r.Name+"/"+s.Name)
		}
	}
	return out
}

// checkNames refuses names not among known, naming the field.
func checkNames(claim, field string, names, known []string) error {
	for i, n := range names {
		if !slices.Contains(known, n) {
			return claimError(claim, fmt.Sprintf("%s[%d]", field, i), "names no request of the claim: %q", n)
		}
	}
	return nil
}
