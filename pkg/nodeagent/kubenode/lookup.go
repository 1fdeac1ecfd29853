package kubenode

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Allocated reports, per pod ("namespace/name"), how many devices of a resource the
// kubelet has already allocated. PodResources implements it over the kubelet's
// pod-resources API.
type Allocated interface {
	AllocatedDevices(ctx context.Context, resource resources.Name) (map[string]int, error)
}

// PodResources reads allocations from the kubelet's pod-resources service.
type PodResources struct {
	Client podresourcesv1.PodResourcesListerClient
}

// AllocatedDevices counts devices of resource per pod.
func (p PodResources) AllocatedDevices(ctx context.Context, resource resources.Name) (map[string]int, error) {
	resp, err := p.Client.List(ctx, &podresourcesv1.ListPodResourcesRequest{})
	if err != nil {
		return nil, fmt.Errorf("kubelet pod-resources List: %w", err)
	}
	out := map[string]int{}
	for _, pr := range resp.GetPodResources() {
		for _, c := range pr.GetContainers() {
			for _, d := range c.GetDevices() {
				if d.GetResourceName() == string(resource) {
					out[pr.GetNamespace()+"/"+pr.GetName()] += len(d.GetDeviceIds())
				}
			}
		}
	}
	return out, nil
}

// Lookup finds the pod an Allocate call is for: the kubelet admits pods one at a time and
// calls Allocate while admitting, so it is the oldest pending pod of the node that asks
// for the resource and does not yet hold all of it.
type Lookup struct {
	Node      *Node
	Allocated Allocated // nil: assume nothing allocated yet
}

var _ nodeagent.PodLookup = (*Lookup)(nil)

// PodForAllocate implements nodeagent.PodLookup.
func (l *Lookup) PodForAllocate(ctx context.Context, resource resources.Name, _ []string) (nodeagent.Pod, bool, error) {
	pods, err := l.Node.pods(ctx)
	if err != nil {
		return nodeagent.Pod{}, false, err
	}
	held := map[string]int{}
	if l.Allocated != nil {
		if held, err = l.Allocated.AllocatedDevices(ctx, resource); err != nil {
			return nodeagent.Pod{}, false, err
		}
	}
	var cands []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		key := p.Namespace + "/" + p.Name
		if p.Status.Phase == corev1.PodPending && p.DeletionTimestamp == nil && requestsGPU(p, resource) && held[key] < requested(p, resource) {
			cands = append(cands, p)
		}
	}
	if len(cands) == 0 {
		return nodeagent.Pod{}, false, nil
	}
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	p := cands[0]
	return nodeagent.Pod{Namespace: p.Namespace, Name: p.Name, UID: string(p.UID), Annotations: p.Annotations}, true, nil
}

// requestsGPU reports whether any container limits resource (any GPU resource when
// resource is empty). Extended resources are requested through limits.
func requestsGPU(p *corev1.Pod, resource resources.Name) bool {
	for _, c := range allContainers(p) {
		for name, q := range c.Resources.Limits {
			n := resources.Name(name)
			if !q.IsZero() && ((resource == "" && n.IsGPU()) || n == resource) {
				return true
			}
		}
	}
	return false
}

// requested is the pod's total limit of resource over its app containers.
func requested(p *corev1.Pod, resource resources.Name) int {
	total := 0
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Limits[corev1.ResourceName(resource)]; ok {
			total += int(q.Value())
		}
	}
	return total
}

func allContainers(p *corev1.Pod) []corev1.Container {
	return append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...)
}
