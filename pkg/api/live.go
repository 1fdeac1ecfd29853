package api

import "github.com/gantry-sched/gantry/pkg/resources"

// LiveState is what a cluster dump (`kubectl get pods -A -o yaml` beside the nodes)
// says runs already: the simulator starts these pods at t=0 where they are instead of
// queueing them again.
type LiveState struct {
	Pods []LivePod
	// Finished counts the pods left out because they Succeeded or Failed: they hold
	// nothing.
	Finished int
}

// LivePod is a pod bound to a node (spec.nodeName set).
type LivePod struct {
	Source Source
	Name   string // namespace/name of the pod
	Node   string
	// Workload is the queued workload the pod is slot (PodSet, Index) of; empty for a
	// pod that only uses capacity (a DaemonSet, static or system pod, or a pod of a job
	// that is not in the input).
	Workload WorkloadID
	PodSet   string
	Index    int32
	// Owner is the job object the pod belongs to (its controller ownerReference), when
	// that is a kind Gantry reads; the loader resolves it into Workload.
	Owner *OwnerRef
	// Requests are the pod's own requests, counted as they are scheduled.
	Requests resources.Vector
	// Devices are the device IDs of the gantry.dev/devices annotation; none: the node's
	// free devices that fit are taken, as the device plugin would.
	Devices []string
}
