package dra

import (
	"fmt"
	"strings"
)

// RefusalReason says why a pod's claims cannot be met on a node.
type RefusalReason string

const (
	// ReasonNoMatch: no free device of the node matches the request's selectors.
	ReasonNoMatch RefusalReason = "NoMatchingDevice"
	// ReasonNotEnough: fewer free matching devices than the request (or the requests
	// together) need.
	ReasonNotEnough RefusalReason = "NotEnoughDevices"
	// ReasonConstraint: enough devices match, but no choice of them meets a
	// matchAttribute constraint.
	ReasonConstraint RefusalReason = "ConstraintUnmet"
	// ReasonHeld: a request with allocationMode All matches devices that other pods
	// hold (it takes every matching device of the node or none).
	ReasonHeld RefusalReason = "MatchingDevicesHeld"
	// ReasonCELError: a selector failed at run time on a device.
	ReasonCELError RefusalReason = "CELRuntimeError"
	// ReasonTooMany: the claim would take more devices on the node than an allocation
	// result may hold (32): an allocationMode All request on a node with more
	// matching devices, as kube-scheduler's allocator refuses it.
	ReasonTooMany RefusalReason = "TooManyDevices"
)

// Refusal is why a pod's claims do not fit a node, for explain: which claim and
// request, which selector or constraint, which device, and why. Fields that do not
// apply are empty (Selector and Constraint -1).
type Refusal struct {
	Reason  RefusalReason
	Claim   string
	Request string
	// Field is the path of the selector or constraint to blame, inside Class when the
	// selector is a DeviceClass's, else inside the claim.
	Field      string
	Class      string
	Selector   int
	Constraint int
	// Device is the DRA name of the device to blame.
	Device string
	Detail string
}

func (r *Refusal) String() string {
	if r == nil {
		return "fits"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: claim %s", r.Reason, r.Claim)
	if r.Request != "" {
		fmt.Fprintf(&b, " request %s", r.Request)
	}
	if r.Class != "" {
		fmt.Fprintf(&b, " (DeviceClass %s)", r.Class)
	}
	if r.Field != "" {
		fmt.Fprintf(&b, " %s", r.Field)
	}
	if r.Device != "" {
		fmt.Fprintf(&b, " device %s", r.Device)
	}
	if r.Detail != "" {
		fmt.Fprintf(&b, ": %s", r.Detail)
	}
	return b.String()
}

// refusalFor starts a refusal about part p.
func (pc *PodClaims) refusalFor(reason RefusalReason, p *part) *Refusal {
	return &Refusal{Reason: reason, Claim: pc.claims[p.claim].name, Request: p.request, Selector: -1, Constraint: -1}
}
