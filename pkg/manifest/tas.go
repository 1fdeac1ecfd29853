package manifest

import (
	"strconv"

	"github.com/gantry-sched/gantry/pkg/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// TopologyOfPod reads Kueue's topology annotations of a live pod with the loader's rules
// (the controller's plain-pod gangs): nil when the pod asks for none; problems come back
// as an ErrorList naming the pod and the annotation. The pods of a gang are one pod set
// (named podSet), so a group name is refused as the loader refuses a group of one.
func TopologyOfPod(source string, pod *corev1.Pod, podSet string) (*api.TopologyRequest, error) {
	var list ErrorList
	c := errs{list: &list, src: srcOf(source, 0), kind: "Pod", name: joinName(pod.Namespace, pod.Name), unknownOK: true}
	t := topologyRequest(pod.Annotations, "metadata.annotations", c)
	checkPodSetGroups(&api.Workload{PodSets: []api.PodSet{{Name: podSet, Topology: t}}}, c)
	if len(list) > 0 {
		return nil, list.sorted()
	}
	return t, nil
}

// tasAnnotations are Kueue's topology annotations of one pod template, each with
// whether it is present (an empty value is not an absent one).
type tasAnnotations struct {
	required, preferred, unconstrained, sliceLevel, sliceSize, constraints, group tasValue
}

type tasValue struct {
	v  string
	ok bool
}

func readTASAnnotations(ann map[string]string) tasAnnotations {
	get := func(k string) tasValue { v, ok := ann[k]; return tasValue{v, ok} }
	return tasAnnotations{
		required:      get(api.AnnotationRequiredTopology),
		preferred:     get(api.AnnotationPreferredTopology),
		unconstrained: get(api.AnnotationUnconstrainedTopology),
		sliceLevel:    get(api.AnnotationSliceRequiredTopology),
		sliceSize:     get(api.AnnotationSliceSize),
		constraints:   get(api.AnnotationSliceRequiredTopologyConstraints),
		group:         get(api.AnnotationPodSetGroupName),
	}
}

func (a tasAnnotations) any() bool {
	return a.required.ok || a.preferred.ok || a.unconstrained.ok || a.sliceLevel.ok || a.sliceSize.ok ||
		a.constraints.ok || a.group.ok
}

// topologyRequest reads Kueue's podset topology annotations from a pod template with
// the rules of Kueue's webhook (jobframework.ValidateTASPodSetRequest) and builds the
// request as Kueue does (NewPodSetTopologyRequest): at most one of required, preferred
// and unconstrained; a slice level with its size, or the multi-layer constraints; a group
// name only beside required or preferred. path is the annotations' path, e.g.
// "spec.template.metadata.annotations". Nil when no annotation is set, or only
// unconstrained "false".
func topologyRequest(ann map[string]string, path string, c errs) *api.TopologyRequest {
	a := readTASAnnotations(ann)
	if !a.any() {
		return nil
	}
	key := func(k string) string { return path + "[" + k + "]" }
	t := &api.TopologyRequest{}
	readTopologyMode(a, path, key, t, c)
	readSliceLayers(a, key, t, c)
	readGroupName(a, key, t, c)
	if t.Mode == "" && t.Level == "" && t.SliceLevel == "" {
		return nil // unconstrained "false" and nothing else: no topology request
	}
	return t
}

// readTopologyMode reads required / preferred / unconstrained, at most one of them.
func readTopologyMode(a tasAnnotations, path string, key func(string) string, t *api.TopologyRequest, c errs) {
	n := 0
	for _, v := range []tasValue{a.required, a.preferred, a.unconstrained} {
		if v.ok {
			n++
		}
	}
	if n > 1 {
		c.add(path, "set at most one of %s, %s and %s", api.AnnotationRequiredTopology,
			api.AnnotationPreferredTopology, api.AnnotationUnconstrainedTopology)
	}
	switch {
	case a.required.ok:
		t.Mode, t.Level = api.TopologyRequired, a.required.v
		checkLevelName(a.required.v, key(api.AnnotationRequiredTopology), c)
	case a.preferred.ok:
		t.Mode, t.Level = api.TopologyPreferred, a.preferred.v
		checkLevelName(a.preferred.v, key(api.AnnotationPreferredTopology), c)
	case a.unconstrained.ok:
		b, err := strconv.ParseBool(a.unconstrained.v)
		if err != nil {
			c.add(key(api.AnnotationUnconstrainedTopology), "%q is not a boolean (write \"true\" or \"false\")", a.unconstrained.v)
		}
		if b {
			t.Mode = api.TopologyUnconstrained
		}
	}
}

// readSliceLayers reads the single slice layer (level and size, set together) or the
// multi-layer constraints, which exclude it.
func readSliceLayers(a tasAnnotations, key func(string) string, t *api.TopologyRequest, c errs) {
	if a.constraints.ok {
		for _, other := range []struct {
			v    tasValue
			name string
		}{{a.sliceLevel, api.AnnotationSliceRequiredTopology}, {a.sliceSize, api.AnnotationSliceSize}} {
			if other.v.ok {
				c.add(key(api.AnnotationSliceRequiredTopologyConstraints), "may not be set when %s is set", other.name)
			}
		}
		readSliceConstraints(a.constraints.v, key(api.AnnotationSliceRequiredTopologyConstraints), t, c)
		return
	}
	if a.sliceLevel.ok && !a.sliceSize.ok {
		c.add(key(api.AnnotationSliceSize), "must be set when %s is set", api.AnnotationSliceRequiredTopology)
	}
	if a.sliceSize.ok && !a.sliceLevel.ok {
		c.add(key(api.AnnotationSliceSize), "may not be set when %s is not set", api.AnnotationSliceRequiredTopology)
	}
	if a.sliceLevel.ok {
		t.SliceLevel = a.sliceLevel.v
		checkLevelName(a.sliceLevel.v, key(api.AnnotationSliceRequiredTopology), c)
	}
	if a.sliceSize.ok {
		n, err := strconv.ParseInt(a.sliceSize.v, 10, 32)
		if err != nil || n <= 0 {
			c.add(key(api.AnnotationSliceSize), "%q is not a positive integer", a.sliceSize.v)
			n = 0
		}
		t.SliceSize = int32(n)
	}
}

// readGroupName reads podset-group-name: allowed only beside required or preferred and
// without slices; a number is refused (Kueue reserves numeric names).
func readGroupName(a tasAnnotations, key func(string) string, t *api.TopologyRequest, c errs) {
	if !a.group.ok {
		return
	}
	k := key(api.AnnotationPodSetGroupName)
	g := a.group.v
	if _, err := strconv.ParseUint(g, 10, 64); err == nil {
		c.add(k, "%q must not be a number", g)
	}
	if g == "" || len(g) > maxGroupNameLen {
		c.add(k, "a group name is 1 to %d characters, got %d", maxGroupNameLen, len(g))
	}
	for _, excl := range []struct {
		v    tasValue
		name string
	}{
		{a.sliceSize, api.AnnotationSliceSize},
		{a.sliceLevel, api.AnnotationSliceRequiredTopology},
		{a.constraints, api.AnnotationSliceRequiredTopologyConstraints},
	} {
		if excl.v.ok {
			c.add(k, "may not be set when %s is set", excl.name)
		}
	}
	if !a.required.ok && !a.preferred.ok {
		c.add(k, "may not be set when neither %s nor %s is set", api.AnnotationPreferredTopology, api.AnnotationRequiredTopology)
		return
	}
	t.Group = g
}

// maxGroupNameLen is the length Kueue's Workload API allows a pod set group name.
const maxGroupNameLen = 256

// checkLevelName refuses a level that is not a node-label key (Kueue validates it as a
// label name).
func checkLevelName(level, field string, c errs) {
	if level == "" {
		c.add(field, "names no level (a node label such as kubernetes.io/hostname)")
		return
	}
	if msgs := validation.IsQualifiedName(level); len(msgs) > 0 {
		c.add(field, "%q is not a node-label key: %s", level, msgs[0])
	}
}
