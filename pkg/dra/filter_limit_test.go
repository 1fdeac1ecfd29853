package dra

import (
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
)

// TestOverClaimLimit: a solution giving one claim more devices than an allocation
// result may list is refused, naming the claim and request; one at the limit is not.
func TestOverClaimLimit(t *testing.T) {
	pc := &PodClaims{
		claims: []compiledClaim{{name: "big"}, {name: "other"}},
		parts:  []part{{claim: 0, request: "all"}, {claim: 1, request: "one"}},
	}
	assign := func(n0, n1 int) solution {
		var a []int
		for range n0 {
			a = append(a, 0)
		}
		for range n1 {
			a = append(a, 1)
		}
		return solution{assign: append(a, -1)}
	}
	if ref := pc.overClaimLimit(assign(resourcev1.AllocationResultsMaxSize, 5)); ref != nil {
		t.Errorf("at the limit: refused %v", ref)
	}
	ref := pc.overClaimLimit(assign(resourcev1.AllocationResultsMaxSize+1, 0))
	if ref == nil || ref.Reason != ReasonTooMany || ref.Claim != "big" || ref.Request != "all" {
		t.Errorf("over the limit: %v, want TooManyDevices for claim big request all", ref)
	}
}
