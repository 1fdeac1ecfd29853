package placement

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// DeviceClaims compiles pod sets' DRA claims with the cluster's DeviceClasses (compiled
// once, by the engine's builder) and keeps each pod set's compiled claims: a pending
// gang is placed again and again, and its claims do not change. Like a FitCache it
// must not be used from several goroutines at once. A nil *DeviceClaims compiles
// nothing: a pod set with claims is then an error.
type DeviceClaims struct {
	classes *dra.Classes
	memo    map[compiledKey]*dra.PodClaims
}

// compiledKey is a pod set (by its first claim: a pod set's Claims slice is its own, and
// a workload read again gets new slices) and the shared claims left out ("" none).
type compiledKey struct {
	first   *api.PodClaim
	without string
}

// maxCompiledPodSets bounds the memo: past it, it starts over (a controller sees
// workloads come and go; compiling again is only slower).
const maxCompiledPodSets = 4096

// NewDeviceClaims serves pod sets' claims with classes.
func NewDeviceClaims(classes *dra.Classes) *DeviceClaims {
	return &DeviceClaims{classes: classes, memo: map[compiledKey]*dra.PodClaims{}}
}

// Classes are the compiled DeviceClasses (nil on a nil receiver).
func (d *DeviceClaims) Classes() *dra.Classes {
	if d == nil {
		return nil
	}
	return d.classes
}

// Compile returns ps's compiled claims. Every claim must be resolved (Spec set): the
// loader or the controller resolves them before a workload reaches the engine.
// namespace is the workload's.
func (d *DeviceClaims) Compile(ps *api.PodSet, namespace string) (*dra.PodClaims, error) {
	return d.compileWithout(ps, namespace, nil)
}

// compileWithout compiles ps's claims but the shared ones listed in without (placed
// already by another pod of the workload); nil when no claim is left.
func (d *DeviceClaims) compileWithout(ps *api.PodSet, namespace string, without []string) (*dra.PodClaims, error) {
	if d == nil || d.classes == nil {
		return nil, fmt.Errorf("pod set %q: has DRA claims but no DeviceClasses were compiled", ps.Name)
	}
	key := compiledKey{first: &ps.Claims[0], without: strings.Join(without, ",")}
	if pc, ok := d.memo[key]; ok {
		return pc, nil
	}
	specs, err := ClaimSpecs(ps, namespace)
	if err != nil {
		return nil, err
	}
	specs = slices.DeleteFunc(specs, func(s dra.ClaimSpec) bool { return s.Shared != "" && slices.Contains(without, s.Shared) })
	var pc *dra.PodClaims
	if len(specs) > 0 {
		if pc, err = d.classes.Compile(specs); err != nil {
			return nil, fmt.Errorf("pod set %q: %w", ps.Name, err)
		}
	}
	if len(d.memo) >= maxCompiledPodSets {
		clear(d.memo)
	}
	d.memo[key] = pc
	return pc, nil
}

// ClaimSpecs are ps's resolved claims as dra compiles them; namespace is the
// workload's (a shared claim is known by namespace/name).
func ClaimSpecs(ps *api.PodSet, namespace string) ([]dra.ClaimSpec, error) {
	out := make([]dra.ClaimSpec, len(ps.Claims))
	for i, c := range ps.Claims {
		if c.Spec == nil {
			return nil, fmt.Errorf("pod set %q: claim %q: %s is not resolved", ps.Name, c.Name, c.Reference())
		}
		out[i] = dra.ClaimSpec{Name: c.Name, Spec: *c.Spec}
		if c.Shared() {
			out[i].Shared = namespace + "/" + c.ResourceClaimName
		}
	}
	return out, nil
}

// NewClaimPodRequest prepares the pods of pod set ps, whose devices come from its
// compiled DRA claims pc: the GPU request is the claims' (with their filter), a node
// needs no device-plugin resource for it, and the quota amounts the loader added to
// the pod set's requests for the claims are not charged on the node.
func NewClaimPodRequest(ps *api.PodSet, fc FlavorConstraint, pc *dra.PodClaims) *PodRequest {
	return claimPodRequest(ps, fc, pc, pc)
}

// claimPodRequest is NewClaimPodRequest for a pod that takes the devices of sub only
// (its shared claims are placed already; nil: none left), all being every claim.
func claimPodRequest(ps *api.PodSet, fc FlavorConstraint, all, sub *dra.PodClaims) *PodRequest {
	var gpu devices.Request
	if sub != nil {
		gpu = sub.Request()
	}
	p := newPodRequest(ps, fc, nodeRequests(ps.Requests, all.Quota()), gpu, nil)
	p.Claims = sub
	return p
}

// nodeRequests is requests without the claims' quota amounts.
func nodeRequests(requests, quota resources.Vector) resources.Vector {
	if quota.IsZero() {
		return requests
	}
	out := requests.Clone()
	for name, a := range quota {
		if out[name] -= a; out[name] <= 0 {
			delete(out, name)
		}
	}
	return out
}

// podRequest prepares a pod set's request: through its claims when it has them.
func (o Options) podRequest(w *api.Workload, ps *api.PodSet, fc FlavorConstraint) (*PodRequest, error) {
	if !ps.HasClaims() {
		return NewPodRequest(ps, fc)
	}
	pc, err := o.Claims.Compile(ps, w.Namespace)
	if err != nil {
		return nil, err
	}
	return NewClaimPodRequest(ps, fc, pc), nil
}

// deviceRejection is the Devices rejection of the device model's refusal ref on node
// devices d; for a pod with claims it carries the claims' own refusal, typed.
func deviceRejection(d *devices.NodeDevices, p *PodRequest, ref *devices.Refusal) Rejection {
	rej := Rejection{Reason: ReasonDevices, Resource: ref.Resource, Detail: ref.Reason}
	if p.Claims != nil {
		if c := p.Claims.Explain(d); c != nil {
			rej.Claim, rej.Detail = c, claimDetail(c)
		}
	}
	return rej
}

// claimKey groups claim refusals across nodes: the claim, the request and the reason
// (nodes ruled out by the same selector count together).
func claimKey(c *dra.Refusal) string {
	k := ReasonDevices.String() + " claim " + c.Claim
	if c.Request != "" {
		k += "/" + c.Request
	}
	return k + " " + string(c.Reason)
}

// claimPhrase is a claim refusal in a Diagnosis summary.
func claimPhrase(c *dra.Refusal) string {
	what := "claim " + c.Claim
	if c.Request != "" {
		what += " request " + c.Request
	}
	switch c.Reason {
	case dra.ReasonNoMatch:
		return what + ": no matching free device"
	case dra.ReasonNotEnough:
		return what + ": too few matching free devices"
	case dra.ReasonConstraint:
		return what + ": constraint unmet"
	case dra.ReasonCELError:
		return what + ": selector error"
	}
	return what + ": " + string(c.Reason)
}

// claimDetail is a claim refusal's detail after its key (claim, request and reason are
// in the key): the DeviceClass, the selector or constraint field, the device, and why.
func claimDetail(c *dra.Refusal) string {
	var parts []string
	if c.Class != "" {
		parts = append(parts, "DeviceClass "+c.Class)
	}
	if c.Field != "" {
		parts = append(parts, c.Field)
	}
	if c.Device != "" {
		parts = append(parts, "device "+c.Device)
	}
	if c.Detail != "" {
		parts = append(parts, c.Detail)
	}
	return strings.Join(parts, ": ")
}
