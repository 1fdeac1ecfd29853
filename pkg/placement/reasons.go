package placement

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Reason is a stable code for why a pod does not fit a node. The order of the constants
// is the order in which feasibility checks run (cheap static checks first).
type Reason int

const (
	// ReasonUnschedulable: the node is cordoned (spec.unschedulable).
	ReasonUnschedulable Reason = iota + 1
	// ReasonNotReady: the node's Ready condition is not True.
	ReasonNotReady
	// ReasonTaint: a NoSchedule/NoExecute taint the pod does not tolerate.
	ReasonTaint
	// ReasonNodeSelector: a pod nodeSelector label is missing or different.
	ReasonNodeSelector
	// ReasonNodeAffinity: no term of the required node affinity matches.
	ReasonNodeAffinity
	// ReasonFlavorLabels: the node lacks a node label of the admitted flavor.
	ReasonFlavorLabels
	// ReasonInsufficient: not enough free cpu, memory, pods or another non-GPU resource.
	ReasonInsufficient
	// ReasonDevices: the device model refused the GPU request (Resource names which).
	ReasonDevices
	// ReasonTopology: the node is outside every topology domain that could hold the gang.
	ReasonTopology
)

var reasonNames = map[Reason]string{
	ReasonUnschedulable: "Unschedulable",
	ReasonNotReady:      "NotReady",
	ReasonTaint:         "Taint",
	ReasonNodeSelector:  "NodeSelector",
	ReasonNodeAffinity:  "NodeAffinity",
	ReasonFlavorLabels:  "FlavorLabels",
	ReasonInsufficient:  "Insufficient",
	ReasonDevices:       "Devices",
	ReasonTopology:      "Topology",
}

func (r Reason) String() string {
	if s, ok := reasonNames[r]; ok {
		return s
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// Rejection is why one pod does not fit one node: a reason, the resource or object it
// concerns (a resource name, a taint "key=value:Effect", a label key) and a detail with
// the numbers for humans.
type Rejection struct {
	Reason   Reason
	Resource resources.Name
	Subject  string
	Detail   string
	// Claim, on a Devices rejection of a pod asking through DRA claims, says which
	// claim, request, selector or constraint and device ruled the node out.
	Claim *dra.Refusal
	// short is the shortfall behind an Insufficient rejection, rendered into its text
	// only when shown (Text): a diagnosis checks thousands of nodes and shows a few.
	short shortfall
}

// shortfall is a non-GPU resource's request, free amount and allocatable.
type shortfall struct {
	set               bool
	want, have, alloc resources.Amount
}

// Text is the rejection's detail: Detail, or the shortfall rendered.
func (r Rejection) Text() string {
	if r.Detail != "" || !r.short.set {
		return r.Detail
	}
	return fmt.Sprintf("requests %s, free %s of %s", resources.Format(r.Resource, r.short.want),
		resources.Format(r.Resource, r.short.have), resources.Format(r.Resource, r.short.alloc))
}

// Key groups equal rejections across nodes for counting: reason plus what it concerns,
// e.g. "Insufficient cpu" or "Taint spot=true:NoSchedule".
func (r Rejection) Key() string {
	switch {
	case r.Claim != nil:
		return claimKey(r.Claim)
	case r.Resource != "":
		return r.Reason.String() + " " + string(r.Resource)
	case r.Subject != "":
		return r.Reason.String() + " " + r.Subject
	}
	return r.Reason.String()
}

// String is a one-line human description.
func (r Rejection) String() string {
	if d := r.Text(); d != "" {
		return r.Key() + ": " + d
	}
	return r.Key()
}

// phrase is the short words used in a Diagnosis summary ("31 too few free GPUs").
func (r Rejection) phrase() string {
	switch r.Reason {
	case ReasonUnschedulable:
		return "unschedulable"
	case ReasonNotReady:
		return "not ready"
	case ReasonTaint:
		return "taint " + r.Subject
	case ReasonNodeSelector:
		return "node selector " + r.Subject
	case ReasonNodeAffinity:
		return "node affinity"
	case ReasonFlavorLabels:
		return "flavor label " + r.Subject
	case ReasonInsufficient:
		return "too little free " + string(r.Resource)
	case ReasonDevices:
		if r.Claim != nil {
			return claimPhrase(r.Claim)
		}
		if r.Resource == resources.NvidiaGPU || r.Resource == resources.GPUMilli {
			return "too few free GPUs"
		}
		return "too few free " + string(r.Resource)
	case ReasonTopology:
		return "topology " + r.Subject
	}
	return r.Key()
}
