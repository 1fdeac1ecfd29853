package manifest

import (
	"slices"

	"github.com/gantry-sched/gantry/pkg/api"
	corev1 "k8s.io/api/core/v1"
)

// podClaims reads a pod spec's spec.resourceClaims and the containers'
// resources.claims (DRA) as references; the loader resolves them once every file is
// read (dra_resolve.go). path is the pod spec's path, e.g. "spec.template.spec".
// Errors: a claim without a name or naming both or neither source, a name used twice,
// and a container claim naming no pod claim.
func podClaims(spec corev1.PodSpec, path string, c errs) []api.PodClaim {
	if len(spec.ResourceClaims) == 0 {
		checkContainerClaims(spec, nil, path, c)
		return nil
	}
	out := make([]api.PodClaim, 0, len(spec.ResourceClaims))
	index := map[string]int{}
	for i, rc := range spec.ResourceClaims {
		p := joinIndex(path+".resourceClaims", i)
		if rc.Name == "" {
			c.add(p+".name", "missing: a pod claim needs a name for containers' resources.claims to refer to")
			continue
		}
		if _, dup := index[rc.Name]; dup {
			c.add(p+".name", "claim %q is listed twice", rc.Name)
			continue
		}
		pc := api.PodClaim{Name: rc.Name, Field: p}
		switch {
		case rc.ResourceClaimName != nil && rc.ResourceClaimTemplateName != nil:
			c.add(p, "set either resourceClaimName or resourceClaimTemplateName, not both")
			continue
		case rc.ResourceClaimName != nil && *rc.ResourceClaimName != "":
			pc.ResourceClaimName = *rc.ResourceClaimName
		case rc.ResourceClaimTemplateName != nil && *rc.ResourceClaimTemplateName != "":
			pc.ResourceClaimTemplateName = *rc.ResourceClaimTemplateName
		default:
			c.add(p, "claim %q names no source: set resourceClaimTemplateName or resourceClaimName", rc.Name)
			continue
		}
		index[rc.Name] = len(out)
		out = append(out, pc)
	}
	checkContainerClaims(spec, func(name, container string) bool {
		i, ok := index[name]
		if ok && !slices.Contains(out[i].Containers, container) {
			out[i].Containers = append(out[i].Containers, container)
		}
		return ok
	}, path, c)
	return out
}

// checkContainerClaims reports each container claim that names no pod claim; use
// (nil when the pod has none) records a good one and says whether the name is known.
func checkContainerClaims(spec corev1.PodSpec, use func(name, container string) bool, path string, c errs) {
	for _, list := range []struct {
		field string
		cs    []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i, ct := range list.cs {
			for j, cl := range ct.Resources.Claims {
				if use != nil && use(cl.Name, ct.Name) {
					continue
				}
				c.add(joinIndex(joinIndex(path+"."+list.field, i)+".resources.claims", j)+".name",
					"claim %q is not in the pod's spec.resourceClaims", cl.Name)
			}
		}
	}
}

// PodClaimsOf reads a live pod's claims as the loader reads a pod spec's (the
// controller's pod gangs); problems come back as an ErrorList naming the pod and field.
func PodClaimsOf(source string, pod *corev1.Pod) ([]api.PodClaim, error) {
	var list ErrorList
	c := errs{list: &list, src: srcOf(source, 0), kind: "Pod", name: joinName(pod.Namespace, pod.Name), unknownOK: true}
	out := podClaims(pod.Spec, "spec", c)
	if len(list) > 0 {
		return nil, list.sorted()
	}
	return out, nil
}
