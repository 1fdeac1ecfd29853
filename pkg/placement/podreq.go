package placement

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

// PodRequest is one pod's needs, prepared once per pod set: its requests split into the
// part charged on node allocatable and the GPU request for the device model, and the
// constraints on nodes (selector, affinity, tolerations, flavor labels).
type PodRequest struct {
	Requests     resources.Vector
	NonGPU       resources.Vector
	GPU          devices.Request
	NodeSelector map[string]string
	Affinity     *corev1.NodeSelector
	Tolerations  []corev1.Toleration
	FlavorLabels map[string]string
	// Claims are the pod's compiled DRA claims (nil when it asks through extended
	// resources); GPU is then their request, filter included.
	Claims *dra.PodClaims
	// names are NonGPU's resource names, sorted, so checks report deterministically.
	names []resources.Name
	// selector and flavor are NodeSelector and FlavorLabels as pairs sorted by key: the
	// static checks read them for every node, and ranging over a map costs far more.
	selector, flavor []labelPair
	// gpuNames are the device-plugin resources the GPU request needs a node to offer
	// (gpu-milli and gpu-memory are offered by every GPU node and left out).
	gpuNames []resources.Name
	// cpu and mem are NonGPU's cpu and memory, for the pre-filter.
	cpu, mem resources.Amount
	// pods is NonGPU's pod slots (1 unless set). cpuMemOnly: cpu, memory and pods are the
	// only non-GPU requests, so comparing those three numbers is the whole non-GPU check.
	pods       resources.Amount
	cpuMemOnly bool
	// static renders what the static checks read, the key of the snapshot's memo of
	// the nodes that pass them (candidates.go).
	static string
	// key is shapeKey's rendering, made on first use.
	key string
}

// NewPodRequest prepares the pods of pod set ps under flavor constraint fc. A GPU
// request the device model cannot parse is an error naming the pod set, as is a pod set
// with DRA claims (NewClaimPodRequest prepares those).
func NewPodRequest(ps *api.PodSet, fc FlavorConstraint) (*PodRequest, error) {
	if ps.HasClaims() {
		return nil, fmt.Errorf("pod set %q: has DRA claims: compile them with the cluster's DeviceClasses", ps.Name)
	}
	gpu, err := devices.ParseRequest(ps.Requests)
	if err != nil {
		return nil, fmt.Errorf("pod set %q: requests: %w", ps.Name, err)
	}
	gpu.PerContainer = ps.ContainerGPU
	return newPodRequest(ps, fc, ps.Requests, gpu, pluginNames(gpu)), nil
}

// newPodRequest builds the request from what the pod is charged on a node (requests)
// and its GPU request; gpuNames are the device-plugin resources a node must offer.
func newPodRequest(ps *api.PodSet, fc FlavorConstraint, requests resources.Vector, gpu devices.Request, gpuNames []resources.Name) *PodRequest {
	tol := ps.Tolerations
	if len(fc.Tolerations) > 0 {
		tol = append(append([]corev1.Toleration(nil), ps.Tolerations...), fc.Tolerations...)
	}
	nonGPU := cluster.NonGPU(requests)
	cpuMemOnly := true
	for name, want := range nonGPU {
		if want > 0 && name != resources.CPU && name != resources.Memory && name != resources.Pods {
			cpuMemOnly = false
		}
	}
	p := &PodRequest{
		cpuMemOnly:   cpuMemOnly,
		selector:     sortedPairs(ps.NodeSelector),
		flavor:       sortedPairs(fc.NodeLabels),
		pods:         nonGPU[resources.Pods],
		Requests:     requests,
		NonGPU:       nonGPU,
		names:        nonGPU.Names(),
		gpuNames:     gpuNames,
		cpu:          nonGPU[resources.CPU],
		mem:          nonGPU[resources.Memory],
		GPU:          gpu,
		NodeSelector: ps.NodeSelector,
		Affinity:     ps.Affinity,
		Tolerations:  tol,
		FlavorLabels: fc.NodeLabels,
	}
	p.static = staticKeyOf(p)
	return p
}

// NewSimplePodRequest prepares a pod from its requests alone (benchmarks, simulators).
func NewSimplePodRequest(requests resources.Vector) (*PodRequest, error) {
	return NewPodRequest(&api.PodSet{Name: "pod", Count: 1, Requests: requests}, FlavorConstraint{})
}

func pluginNames(r devices.Request) []resources.Name {
	var out []resources.Name
	for _, n := range r.Vector().Names() {
		if n != resources.GPUMilli && n != resources.GPUMemory {
			out = append(out, n)
		}
	}
	return out
}

// labelPair is one required node label.
type labelPair struct{ key, value string }

// sortedPairs lists m's entries sorted by key (nil for an empty map).
func sortedPairs(m map[string]string) []labelPair {
	if len(m) == 0 {
		return nil
	}
	out := make([]labelPair, 0, len(m))
	for k, v := range m {
		out = append(out, labelPair{k, v})
	}
	slices.SortFunc(out, func(a, b labelPair) int { return strings.Compare(a.key, b.key) })
	return out
}
