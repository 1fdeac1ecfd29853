package nodeagent

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// AnnotationDevices is the pod annotation in which Gantry's scheduler lists the device
// IDs it assigned ("GPU-0,GPU-3/mig-1g.5gb@4"), as devices.Assignment.IDs produces them.
const AnnotationDevices = "gantry.dev/devices"

// Env variable names set in a container's allocation.
const (
	EnvVisibleDevices = "NVIDIA_VISIBLE_DEVICES"
	EnvMPSPipeDir     = "CUDA_MPS_PIPE_DIRECTORY"
	EnvMPSMemLimit    = "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"
	EnvMPSThreads     = "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"
)

// Pod is what the allocator needs to know about the pod being admitted.
type Pod struct {
	Namespace, Name, UID string
	Annotations          map[string]string
}

// Key is "namespace/name".
func (p Pod) Key() string { return p.Namespace + "/" + p.Name }

// PodLookup finds the pod the kubelet is allocating devices for: the kubelet's Allocate
// call carries only device IDs. In production this is backed by the kubelet's
// pod-resources API and the pods bound to the node; tests use a fake.
type PodLookup interface {
	PodForAllocate(ctx context.Context, resource resources.Name, kubeletIDs []string) (Pod, bool, error)
}

// Mount is a host path made visible in the container.
type Mount struct {
	HostPath, ContainerPath string
	ReadOnly                bool
}

// ContainerAllocation is what one container gets: the devices (Gantry IDs), its
// environment and mounts.
type ContainerAllocation struct {
	IDs    []string
	Envs   map[string]string
	Mounts []Mount
}

// Allocator turns the kubelet's picks, or the scheduler's annotation when the pod has
// one, into container allocations. It remembers which annotated devices each pod's
// earlier containers received, so a multi-container pod gets its annotation's devices in
// order and never twice.
type Allocator struct {
	inv        *Inventory
	pods       PodLookup
	mpsPipeDir string
	mu         sync.Mutex
	given      map[string]map[string]bool // pod UID or key -> annotated IDs handed out
}

// DefaultMPSPipeDir is where the MPS control daemon's pipes live on the host.
const DefaultMPSPipeDir = "/run/nvidia/mps"

// NewAllocator makes an allocator over inv; pods may be nil (the kubelet's picks are
// then always used), mpsPipeDir empty for DefaultMPSPipeDir.
func NewAllocator(inv *Inventory, pods PodLookup, mpsPipeDir string) *Allocator {
	if mpsPipeDir == "" {
		mpsPipeDir = DefaultMPSPipeDir
	}
	return &Allocator{inv: inv, pods: pods, mpsPipeDir: mpsPipeDir, given: map[string]map[string]bool{}}
}

// Allocate serves one container's request for kubeletIDs of resource. When the pod
// carries gantry.dev/devices, the container gets the next len(kubeletIDs) annotated
// devices of this resource instead of the kubelet's picks, so scheduler and node agree.
// A container asking for more than one replica where the node's sharing allows one is
// refused with NVIDIA's reason.
func (a *Allocator) Allocate(ctx context.Context, resource resources.Name, kubeletIDs []string) (ContainerAllocation, error) {
	pod, found, err := a.podOf(ctx, resource, kubeletIDs)
	if err != nil {
		return ContainerAllocation{}, err
	}
	if err := a.checkReplicas(resource, kubeletIDs); err != nil {
		if found {
			err = fmt.Errorf("pod %s: %w", pod.Key(), err)
		}
		return ContainerAllocation{}, err
	}
	ids := kubeletIDs
	if found && strings.TrimSpace(pod.Annotations[AnnotationDevices]) != "" {
		if ids, err = a.annotated(pod, resource, len(kubeletIDs)); err != nil {
			return ContainerAllocation{}, err
		}
	}
	devs := make([]PluginDevice, len(ids))
	for i, id := range ids {
		p, ok := a.inv.Lookup(id)
		switch {
		case !ok:
			return ContainerAllocation{}, fmt.Errorf("allocate %s: device %q is not on this node", resource, id)
		case p.Resource != resource:
			return ContainerAllocation{}, fmt.Errorf("allocate %s: device %q is advertised as %s", resource, id, p.Resource)
		case !p.Healthy:
			return ContainerAllocation{}, fmt.Errorf("allocate %s: device %q is unhealthy", resource, id)
		}
		devs[i] = p
	}
	return a.containerAllocation(devs), nil
}

// podOf finds the pod being admitted, when the allocator has a lookup.
func (a *Allocator) podOf(ctx context.Context, resource resources.Name, kubeletIDs []string) (Pod, bool, error) {
	if a.pods == nil {
		return Pod{}, false, nil
	}
	pod, found, err := a.pods.PodForAllocate(ctx, resource, kubeletIDs)
	if err != nil {
		return Pod{}, false, fmt.Errorf("allocate %d %s: finding the pod: %w", len(kubeletIDs), resource, err)
	}
	return pod, found, nil
}

// checkReplicas refuses a container that asks for more than one replica where the
// node's sharing allows one (MPS always; time-slicing with failRequestsGreaterThanOne),
// as NVIDIA's plugin does: the container would be charged for replicas whose memory and
// thread share it never gets.
func (a *Allocator) checkReplicas(resource resources.Name, kubeletIDs []string) error {
	if len(kubeletIDs) < 2 {
		return nil
	}
	p, ok := a.inv.Lookup(kubeletIDs[0])
	if !ok || p.Replicas == 0 {
		return nil // not a replica: unknown IDs are refused below, naming the device
	}
	if err := a.inv.Sharing().CheckContainerReplicas(resource, int64(len(kubeletIDs))); err != nil {
		return fmt.Errorf("allocate %d %s: %w", len(kubeletIDs), resource, err)
	}
	return nil
}

// annotated picks the pod's next n annotated devices of resource.
func (a *Allocator) annotated(pod Pod, resource resources.Name, n int) ([]string, error) {
	key := pod.UID
	if key == "" {
		key = pod.Key()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	given := a.given[key]
	if given == nil {
		given = map[string]bool{}
		a.given[key] = given
	}
	var out []string
	for _, id := range strings.Split(pod.Annotations[AnnotationDevices], ",") {
		id = strings.TrimSpace(id)
		p, ok := a.inv.Lookup(id)
		if !ok {
			return nil, fmt.Errorf("pod %s: annotation %s: device %q is not on this node", pod.Key(), AnnotationDevices, id)
		}
		if p.Resource != resource || given[id] || len(out) == n {
			continue
		}
		out = append(out, id)
	}
	if len(out) < n {
		return nil, fmt.Errorf("pod %s: annotation %s has %d unallocated %s devices, the container asks for %d", pod.Key(), AnnotationDevices, len(out), resource, n)
	}
	for _, id := range out {
		given[id] = true
	}
	return out, nil
}

// Forget drops what the allocator remembers about a pod (after it is deleted).
func (a *Allocator) Forget(podUIDOrKey string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.given, podUIDOrKey)
}

// containerAllocation builds the environment: NVIDIA_VISIBLE_DEVICES with each UUID
// once (replicas of one GPU share it) and, for MPS replicas, the pipe directory and the
// limits NVIDIA's MPS daemon gives each client: per visible device (by its ordinal in the
// container) the device's memory over its replicas, and 100/replicas of its threads.
func (a *Allocator) containerAllocation(devs []PluginDevice) ContainerAllocation {
	ca := ContainerAllocation{Envs: map[string]string{}}
	var uuids, limits []string
	seen := map[string]bool{}
	threads := 0
	for _, d := range devs {
		ca.IDs = append(ca.IDs, d.ID)
		if seen[d.UUID] {
			continue
		}
		seen[d.UUID] = true
		if d.MPSMemory > 0 {
			limits = append(limits, fmt.Sprintf("%d=%dM", len(uuids), d.MPSMemory))
			threads = max(threads, devices.MPSThreadPercentage(d.Replicas))
		}
		uuids = append(uuids, d.UUID)
	}
	ca.Envs[EnvVisibleDevices] = strings.Join(uuids, ",")
	if len(limits) > 0 {
		ca.Envs[EnvMPSPipeDir] = a.mpsPipeDir
		ca.Envs[EnvMPSMemLimit] = strings.Join(limits, ",")
		ca.Envs[EnvMPSThreads] = strconv.Itoa(threads)
		ca.Mounts = append(ca.Mounts, Mount{HostPath: a.mpsPipeDir, ContainerPath: a.mpsPipeDir})
	}
	return ca
}
