package devices

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// DeviceKind says what a Device of an assignment is.
type DeviceKind uint8

const (
	// WholeGPU is an entire GPU.
	WholeGPU DeviceKind = iota + 1
	// MIGDevice is one MIG instance.
	MIGDevice
	// ReplicaDevice is one time-sliced or MPS replica.
	ReplicaDevice
	// ShareDevice is a fraction of one GPU.
	ShareDevice
	// MIGReplicaDevice is one time-sliced replica of a MIG instance.
	MIGReplicaDevice
)

// Device is one concrete device handed to a pod.
type Device struct {
	GPU  int // GPU index
	Kind DeviceKind
	// Instance is the MIG instance (MIGDevice, MIGReplicaDevice); Replica the replica
	// slot (ReplicaDevice, MIGReplicaDevice).
	Instance Instance
	Replica  int
	// Milli is the device's share in the common unit; Memory the GPU memory it holds
	// (for a ShareDevice: what the pod asked for).
	Milli  resources.MilliGPU
	Memory resources.MiB
}

// ID is the device's stable name: "GPU-0", "GPU-3/mig-1g.10gb@4", "GPU-2/replica-1",
// "GPU-4/mig-1g.5gb@3/replica-1" (a replica of a time-sliced MIG instance, as the node
// agent names it), "GPU-1/share-500m" (with "-2048Mi" when memory was asked for).
// ParseDeviceID reads it back.
func (d Device) ID() string {
	gpu := GPUID(d.GPU)
	switch d.Kind {
	case MIGDevice:
		return gpu + "/" + idMIG + d.Instance.String()
	case MIGReplicaDevice:
		return gpu + "/" + idMIG + d.Instance.String() + "/" + idReplica + strconv.Itoa(d.Replica)
	case ReplicaDevice:
		return gpu + "/" + idReplica + strconv.Itoa(d.Replica)
	case ShareDevice:
		id := fmt.Sprintf("%s/%s%dm", gpu, idShare, d.Milli)
		if d.Memory > 0 {
			id += fmt.Sprintf("-%dMi", d.Memory)
		}
		return id
	}
	return gpu
}

// GPUID is the ID of GPU index as a whole: "GPU-3". Every device ID on that GPU
// starts with it.
func GPUID(index int) string { return idGPU + strconv.Itoa(index) }

// Assignment is the devices picked for one pod's request on one node.
type Assignment struct {
	Devices []Device
}

// IsZero reports whether the assignment holds nothing (a pod without GPU requests).
func (a Assignment) IsZero() bool { return len(a.Devices) == 0 }

// IDs lists the device IDs in pick order.
func (a Assignment) IDs() []string {
	out := make([]string, len(a.Devices))
	for i, d := range a.Devices {
		out[i] = d.ID()
	}
	return out
}

// GPUIndices lists the distinct GPU indices used, in pick order.
func (a Assignment) GPUIndices() []int {
	var out []int
	seen := map[int]bool{}
	for _, d := range a.Devices {
		if !seen[d.GPU] {
			seen[d.GPU] = true
			out = append(out, d.GPU)
		}
	}
	return out
}

// MilliGPU is the assignment's size in the common accounting unit.
func (a Assignment) MilliGPU() resources.MilliGPU {
	var sum resources.MilliGPU
	for _, d := range a.Devices {
		sum += d.Milli
	}
	return sum
}

func (a Assignment) String() string { return "[" + strings.Join(a.IDs(), " ") + "]" }

// Refusal says why a request does not fit a node: the resource that is short and a
// reason with the numbers. Not fitting is a value, not an error.
type Refusal struct {
	Resource resources.Name
	Reason   string
}

func (r *Refusal) String() string {
	if r == nil {
		return "fits"
	}
	return string(r.Resource) + ": " + r.Reason
}
