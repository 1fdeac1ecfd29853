package controller

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// ResourceVector converts a ResourceList into typed amounts; field names the list in
// errors ("spec.podSets[0].requests").
func ResourceVector(l corev1.ResourceList, field string) (resources.Vector, error) {
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, string(n))
	}
	sort.Strings(names)
	v := make(resources.Vector, len(l))
	for _, n := range names {
		a, err := resources.FromQuantity(resources.Name(n), l[corev1.ResourceName(n)])
		if err != nil {
			return nil, fmt.Errorf("%s[%s]: %w", field, n, err)
		}
		if a != 0 {
			v[resources.Name(n)] = a
		}
	}
	return v, nil
}

// ToAPIWorkload converts a Workload object into the engine's model. priority is the
// value resolved from the priority class. The error names the object and field.
func ToAPIWorkload(wl *v1alpha1.Workload, priority int32) (*api.Workload, error) {
	out := &api.Workload{
		Meta: api.Meta{
			Name: wl.Name, Namespace: wl.Namespace, Labels: wl.Labels, Annotations: wl.Annotations,
			Created: wl.CreationTimestamp.Time,
			Source:  api.Source{File: "workload " + wl.Namespace + "/" + wl.Name},
		},
		Queue:         wl.Spec.QueueName,
		PriorityClass: wl.Spec.PriorityClassName,
		Priority:      priority,
	}
	if o := wl.Spec.Owner; o != nil {
		out.Owner = api.OwnerRef{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name}
	}
	if s := wl.Spec.MaximumExecutionTimeSeconds; s != nil {
		out.MaxRuntime = time.Duration(*s) * time.Second
	}
	for _, a := range []struct {
		key string
		to  *time.Duration
	}{{api.AnnotationMinRuntime, &out.MinRuntime}, {api.AnnotationDuration, &out.Timing.Duration}} {
		if s, ok := wl.Annotations[a.key]; ok {
			d, err := api.ParseDuration(s)
			if err != nil {
				return nil, fmt.Errorf("workload %s/%s: metadata.annotations[%s]: %w", wl.Namespace, wl.Name, a.key, err)
			}
			*a.to = d
		}
	}
	for i := range wl.Spec.PodSets {
		ps, err := toAPIPodSet(&wl.Spec.PodSets[i], fmt.Sprintf("spec.podSets[%d]", i))
		if err != nil {
			return nil, fmt.Errorf("workload %s/%s: %w", wl.Namespace, wl.Name, err)
		}
		out.PodSets = append(out.PodSets, ps)
	}
	if len(out.PodSets) == 0 {
		return nil, fmt.Errorf("workload %s/%s: spec.podSets: empty", wl.Namespace, wl.Name)
	}
	if err := podClaimsOf(wl, out); err != nil { // dra_workload.go
		return nil, err
	}
	minMember, err := gangSize(wl)
	if err != nil {
		return nil, err
	}
	out.MinMember = minMember
	return ApplyPodSetUpdates(wl, out) // a Ready check's node selectors place the pods too
}

// carriedAnnotations are the annotations of a job object its Workload takes over:
// those the engine reads (the minimum runtime that protects it from preemption, the
// expected runtime that dates its end), plus the gang size the shared reader found
// (minMember > 0: a PodGroup's minMember, Kubeflow's schedulingPolicy.minAvailable),
// which a Workload object has no field for. nil when there are none.
func carriedAnnotations(ann map[string]string, minMember int32) map[string]string {
	out := map[string]string{}
	for _, k := range []string{api.AnnotationMinRuntime, api.AnnotationDuration} {
		if v, ok := ann[k]; ok {
			out[k] = v
		}
	}
	if minMember > 0 {
		out[api.AnnotationGangSize] = strconv.Itoa(int(minMember))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// gangSize reads the gang size a Workload carries in its annotations (0: none, the sum
// of its pod sets' gang counts).
func gangSize(wl *v1alpha1.Workload) (int32, error) {
	s, ok := wl.Annotations[api.AnnotationGangSize]
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("workload %s/%s: metadata.annotations[%s]: %q is not a positive number of pods",
			wl.Namespace, wl.Name, api.AnnotationGangSize, s)
	}
	return int32(n), nil
}

// fromAPIPodSet converts a pod set of the engine's model (as the shared reader made it)
// into the Workload object's pod set: toAPIPodSet's inverse.
func fromAPIPodSet(in api.PodSet) v1alpha1.PodSet {
	out := v1alpha1.PodSet{
		Name: in.Name, Count: in.Count, Requests: resourceList(in.Requests), ContainerGPU: in.ContainerGPU,
		NodeSelector: in.NodeSelector, NodeAffinity: in.Affinity, Tolerations: in.Tolerations,
		TopologyRequest: fromAPITopology(in.Topology),
	}
	if in.MinCount > 0 && in.MinCount < in.Count {
		out.MinCount = ptr.To(in.MinCount)
	}
	return out
}

// fromAPITopology writes a topology request with the fields of Kueue's v1beta2
// PodSetTopologyRequest: a request with inner slice layers keeps all its layers in
// podsetSliceRequiredTopologyConstraints (as the multi-layer annotation said them), one
// with a single layer in podSetSliceRequiredTopology/podSetSliceSize.
func fromAPITopology(t *api.TopologyRequest) *v1alpha1.PodSetTopologyRequest {
	if t == nil {
		return nil
	}
	out := &v1alpha1.PodSetTopologyRequest{}
	switch t.Mode {
	case api.TopologyRequired:
		out.Required = ptr.To(t.Level)
	case api.TopologyPreferred:
		out.Preferred = ptr.To(t.Level)
	case api.TopologyUnconstrained:
		out.Unconstrained = ptr.To(true)
	}
	if t.Group != "" {
		out.PodSetGroupName = ptr.To(t.Group)
	}
	if t.HighestTierAllowed > 0 {
		out.HighestTierAllowed = ptr.To(t.HighestTierAllowed)
	}
	if t.InnerSlices[0].Size > 0 {
		out.PodsetSliceRequiredTopologyConstraints = sliceConstraintsOf(t)
		return out
	}
	if t.SliceLevel != "" {
		out.PodSetSliceRequiredTopology = ptr.To(t.SliceLevel)
	}
	if t.SliceSize > 0 {
		out.PodSetSliceSize = ptr.To(t.SliceSize)
	}
	return out
}

// sliceConstraintsOf lists the slice layers of t, the outermost first.
func sliceConstraintsOf(t *api.TopologyRequest) []v1alpha1.PodsetSliceRequiredTopologyConstraint {
	out := []v1alpha1.PodsetSliceRequiredTopologyConstraint{{Topology: t.SliceLevel, Size: t.SliceSize}}
	for _, l := range t.InnerSlices {
		if l.Size == 0 {
			break
		}
		out = append(out, v1alpha1.PodsetSliceRequiredTopologyConstraint{Topology: l.Level, Size: l.Size})
	}
	return out
}

// toAPITopology reads a Workload's topology request back: fromAPITopology's inverse.
// The CRD's validation refuses what is contradictory; the checks here name the field
// for an object written without it (an older CRD, a dry run).
func toAPITopology(t *v1alpha1.PodSetTopologyRequest, field string) (*api.TopologyRequest, error) {
	if t == nil {
		return nil, nil
	}
	tr := &api.TopologyRequest{SliceLevel: ptr.Deref(t.PodSetSliceRequiredTopology, ""), SliceSize: ptr.Deref(t.PodSetSliceSize, 0),
		Group: ptr.Deref(t.PodSetGroupName, ""), HighestTierAllowed: ptr.Deref(t.HighestTierAllowed, 0)}
	if tr.HighestTierAllowed < 0 {
		return nil, fmt.Errorf("%s.highestTierAllowed: %d is negative", field, tr.HighestTierAllowed)
	}
	switch {
	case t.Required != nil:
		tr.Mode, tr.Level = api.TopologyRequired, *t.Required
	case t.Preferred != nil:
		tr.Mode, tr.Level = api.TopologyPreferred, *t.Preferred
	case ptr.Deref(t.Unconstrained, false):
		tr.Mode = api.TopologyUnconstrained
	}
	layers := t.PodsetSliceRequiredTopologyConstraints
	if len(layers) == 0 {
		return tr, nil
	}
	at := field + ".podsetSliceRequiredTopologyConstraints"
	if tr.SliceLevel != "" || tr.SliceSize != 0 {
		return nil, fmt.Errorf("%s: may not be set beside podSetSliceRequiredTopology or podSetSliceSize", at)
	}
	if len(layers) > 1+api.MaxInnerSlices {
		return nil, fmt.Errorf("%s: %d layers: want 1 to %d", at, len(layers), 1+api.MaxInnerSlices)
	}
	for i, l := range layers {
		if l.Topology == "" || l.Size < 1 {
			return nil, fmt.Errorf("%s[%d]: level %q size %d: want a level and a size of at least 1", at, i, l.Topology, l.Size)
		}
	}
	tr.SliceLevel, tr.SliceSize = layers[0].Topology, layers[0].Size
	for i, l := range layers[1:] {
		tr.InnerSlices[i] = api.SliceLayer{Level: l.Topology, Size: l.Size}
	}
	return tr, nil
}

func toAPIPodSet(in *v1alpha1.PodSet, field string) (api.PodSet, error) {
	req, err := ResourceVector(in.Requests, field+".requests")
	if err != nil {
		return api.PodSet{}, err
	}
	ps := api.PodSet{
		Name:          in.Name,
		Count:         in.Count,
		MinCount:      ptr.Deref(in.MinCount, 0),
		Requests:      req,
		ContainerGPU:  in.ContainerGPU,
		NodeSelector:  in.NodeSelector,
		Affinity:      in.NodeAffinity,
		Tolerations:   in.Tolerations,
		SchedulerName: SchedulerName,
	}
	if ps.Topology, err = toAPITopology(in.TopologyRequest, field+".topologyRequest"); err != nil {
		return api.PodSet{}, err
	}
	return ps, nil
}
