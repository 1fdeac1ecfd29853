package manifest

import (
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
	resourcev1 "k8s.io/api/resource/v1"
)

// fileClaims is the ClaimSource of the files read: templates and claims by
// "namespace/name".
type fileClaims struct {
	templates map[string]*resourcev1.ResourceClaimTemplate
	claims    map[string]*resourcev1.ResourceClaim
}

func (f fileClaims) ClaimTemplate(namespace, name string) (*resourcev1.ResourceClaimTemplate, bool) {
	t, ok := f.templates[namespace+"/"+name]
	return t, ok
}

func (f fileClaims) Claim(namespace, name string) (*resourcev1.ResourceClaim, bool) {
	c, ok := f.claims[namespace+"/"+name]
	return c, ok
}

// resolveClaims runs once every file is read, before pods are grouped: it compiles the
// DeviceClasses and every claim template and claim on its own (so a bad selector is
// reported at its object, file and line), then resolves and compiles each pod set's
// claims and adds their quota amounts to its requests. A pod set naming an object that
// failed on its own is not reported again.
func (l *loader) resolveClaims() {
	if !l.hasClaims() && len(l.objs.DeviceClasses) == 0 {
		return
	}
	classes := l.compileClasses()
	if classes == nil {
		return
	}
	src, bad := l.compileClaimObjects(classes)
	resolve := func(ps []api.PodSet, namespace string, c errs) {
		w := api.Workload{PodSets: ps}
		w.Namespace = namespace
		for _, e := range ResolveClaims(&w, src, classes) {
			if !namesBad(w.PodSets, e, namespace, bad) {
				c.add(e.Field, "pod set %q: claim %q: %v", e.PodSet, e.Claim, e.Err)
			}
		}
	}
	for _, w := range l.workloads {
		resolve(w.PodSets, w.Namespace, w.c)
	}
	for i := range l.pods {
		p := &l.pods[i]
		sets := []api.PodSet{p.set}
		resolve(sets, defaultNS(p.obj.Namespace), p.c)
		p.set = sets[0]
	}
}

// hasClaims reports whether any pod set read names a claim.
func (l *loader) hasClaims() bool {
	for _, w := range l.workloads {
		for _, ps := range w.PodSets {
			if ps.HasClaims() {
				return true
			}
		}
	}
	for _, p := range l.pods {
		if p.set.HasClaims() {
			return true
		}
	}
	return false
}

// compileClasses compiles the DeviceClasses with the quota mappings and the GPUs of
// the nodes the files define (allocationMode All is charged the most devices it
// matches on one of them). Each class is first compiled alone so that an error lands
// on its own object; nil when any failed.
func (l *loader) compileClasses() *dra.Classes {
	mappings := quotaMappings(l.objs.QuotaMappings)
	ok := true
	for _, dc := range l.objs.DeviceClasses {
		if _, err := dra.NewClasses([]resourcev1.DeviceClass{dc.Object}, nil); err != nil {
			l.context("DeviceClass", dc.Object.Name).add(classErrorField(err), "%v", claimErrorText(err))
			ok = false
		}
	}
	if !ok {
		return nil
	}
	classes, err := dra.NewClasses(l.objs.DeviceClassObjects(), mappings, dra.WithNodes(l.classNodes()))
	if err != nil {
		l.errs = append(l.errs, &Error{Source: firstDRASource(l.objs), Kind: "Configuration", Field: "resources.deviceClassMappings", Msg: err.Error()})
		return nil
	}
	return classes
}

// classNodes are the GPUs of the nodes the files define (NodePools, v1 Nodes and the
// GPUs their ResourceSlices publish), as the simulator builds them (cluster.NodesOf).
// Pools and Nodes were checked as they were read; slices that do not read are reported
// at the slice (checkSlices), and their nodes count without them here. Files that
// define no node give an empty cluster: an All claim is then an error at its
// allocationMode, as it could never be allocated.
func (l *loader) classNodes() map[string][]devices.GPU {
	nodes, err := cluster.NodesOf(&l.objs)
	if err != nil {
		nodes, err = cluster.NodesOf(&api.Objects{NodePools: l.objs.NodePools, Nodes: l.objs.Nodes})
	}
	if err != nil {
		return map[string][]devices.GPU{}
	}
	return cluster.GPUsByNode(nodes)
}

// quotaMappings converts the loaded mappings into dra's.
func quotaMappings(ms []api.DeviceClassMapping) []dra.QuotaMapping {
	if len(ms) == 0 {
		return nil // dra's defaults
	}
	out := make([]dra.QuotaMapping, len(ms))
	for i, m := range ms {
		out[i] = dra.QuotaMapping{Resource: m.Resource, DeviceClassNames: m.DeviceClassNames}
	}
	return out
}

// firstDRASource is where to report an error of the classes and mappings together: the
// first mapping, else the first class.
func firstDRASource(objs api.Objects) api.Source {
	if len(objs.QuotaMappings) > 0 {
		return objs.QuotaMappings[0].Source
	}
	return objs.DeviceClasses[0].Source
}

// compileClaimObjects indexes the templates and claims and compiles each alone,
// reporting its errors at its own object; bad holds the "kind/namespace/name" of those
// that failed.
func (l *loader) compileClaimObjects(classes *dra.Classes) (fileClaims, map[string]bool) {
	src := fileClaims{templates: map[string]*resourcev1.ResourceClaimTemplate{}, claims: map[string]*resourcev1.ResourceClaim{}}
	bad := map[string]bool{}
	for i := range l.objs.ResourceClaimTemplates {
		t := &l.objs.ResourceClaimTemplates[i].Object
		key := t.Namespace + "/" + t.Name
		src.templates[key] = t
		if _, err := classes.Compile([]dra.ClaimSpec{{Name: t.Name, Spec: t.Spec.Spec}}); err != nil {
			l.context("ResourceClaimTemplate", key).add(joinPath("spec.spec", claimErrorField(err)), "%v", claimErrorText(err))
			bad["ResourceClaimTemplate/"+key] = true
		}
	}
	for i := range l.objs.ResourceClaims {
		c := &l.objs.ResourceClaims[i].Object
		key := c.Namespace + "/" + c.Name
		src.claims[key] = c
		if _, err := classes.Compile([]dra.ClaimSpec{{Name: c.Name, Shared: key, Spec: c.Spec}}); err != nil {
			l.context("ResourceClaim", key).add(joinPath("spec", claimErrorField(err)), "%v", claimErrorText(err))
			bad["ResourceClaim/"+key] = true
		}
	}
	return src, bad
}

// namesBad reports whether the claim of error e names an object that failed on its own.
func namesBad(sets []api.PodSet, e *ClaimError, namespace string, bad map[string]bool) bool {
	for _, ps := range sets {
		if ps.Name != e.PodSet {
			continue
		}
		for _, pc := range ps.Claims {
			if pc.Shared() && bad["ResourceClaim/"+namespace+"/"+pc.ResourceClaimName] {
				return true
			}
			if !pc.Shared() && bad["ResourceClaimTemplate/"+namespace+"/"+pc.ResourceClaimTemplateName] {
				return true
			}
		}
	}
	return false
}
