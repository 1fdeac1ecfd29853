package manifest

import (
	"github.com/gantry-sched/gantry/pkg/api"
	resourcev1 "k8s.io/api/resource/v1"
)

// DRAAPIVersion is the Dynamic Resource Allocation API Gantry reads (GA in Kubernetes
// 1.34). The beta versions are refused with a message naming it (dra_versions.go).
const DRAAPIVersion = "resource.k8s.io/v1"

// draKinds are the resource.k8s.io kinds Load reads.
func draKinds() []kindEntry {
	v := []string{DRAAPIVersion}
	return []kindEntry{
		{v, "DeviceClass", (*loader).deviceClass},
		{v, "ResourceClaimTemplate", (*loader).resourceClaimTemplate},
		{v, "ResourceClaim", (*loader).resourceClaim},
		{v, "ResourceSlice", (*loader).resourceSlice},
		{kueueConfigVersions(), "Configuration", (*loader).kueueConfiguration},
	}
}

// deviceClass reads a DeviceClass. Its selectors are compiled once every file is read
// (dra_resolve.go), with the quota mappings that may come from another file.
func (l *loader) deviceClass(d document, c errs) {
	var in resourcev1.DeviceClass
	if !decode(d, &in, false, c) {
		return
	}
	clusterScoped(in.ObjectMeta, c)
	if l.register("DeviceClass", metaOf(in.ObjectMeta, c.src, ""), c) {
		l.objs.DeviceClasses = append(l.objs.DeviceClasses, api.DeviceClass{Object: in, Source: c.src})
	}
}

// resourceClaimTemplate reads a ResourceClaimTemplate: what every pod naming it gets a
// claim of its own from.
func (l *loader) resourceClaimTemplate(d document, c errs) {
	var in resourcev1.ResourceClaimTemplate
	if !decode(d, &in, false, c) {
		return
	}
	in.Namespace = defaultNS(in.Namespace)
	if l.register("ResourceClaimTemplate", metaOf(in.ObjectMeta, c.src, DefaultNamespace), c) {
		l.objs.ResourceClaimTemplates = append(l.objs.ResourceClaimTemplates, api.ResourceClaimTemplate{Object: in, Source: c.src})
	}
}

// resourceClaim reads a ResourceClaim: one claim every pod naming it shares. Its status
// (an allocation made elsewhere) is dropped: allocating is the scheduler's job.
func (l *loader) resourceClaim(d document, c errs) {
	var in resourcev1.ResourceClaim
	if !decode(d, &in, false, c) {
		return
	}
	in.Namespace = defaultNS(in.Namespace)
	if l.register("ResourceClaim", metaOf(in.ObjectMeta, c.src, DefaultNamespace), c) {
		l.objs.ResourceClaims = append(l.objs.ResourceClaims, api.ResourceClaim{Object: in, Source: c.src})
	}
}

// resourceSlice reads a ResourceSlice as a node's DRA driver publishes it: one pool
// per node, device names unique in the slice. Which GPUs the devices are is worked out
// per node once every file is read (dra_nodes.go).
func (l *loader) resourceSlice(d document, c errs) {
	var in resourcev1.ResourceSlice
	if !decode(d, &in, false, c) {
		return
	}
	clusterScoped(in.ObjectMeta, c)
	if !checkSlice(&in, c) {
		return
	}
	if l.register("ResourceSlice", metaOf(in.ObjectMeta, c.src, ""), c) {
		l.objs.ResourceSlices = append(l.objs.ResourceSlices, api.ResourceSlice{Object: in, Source: c.src})
	}
}

// checkSlice checks what the API server would refuse and what Gantry needs: a driver,
// a pool, the node it belongs to, and device names unique in the slice.
func checkSlice(s *resourcev1.ResourceSlice, c errs) bool {
	before := len(*c.list)
	if s.Spec.Driver == "" {
		c.add("spec.driver", "missing: a slice names the DRA driver that publishes it")
	}
	if s.Spec.Pool.Name == "" {
		c.add("spec.pool.name", "missing: a slice belongs to a pool")
	}
	if s.Spec.NodeName == nil || *s.Spec.NodeName == "" {
		switch {
		case s.Spec.NodeSelector != nil, s.Spec.AllNodes != nil && *s.Spec.AllNodes,
			s.Spec.PerDeviceNodeSelection != nil && *s.Spec.PerDeviceNodeSelection:
			c.add("spec", "only node-local slices (spec.nodeName) are read: Gantry's devices are a node's GPUs")
		default:
			c.add("spec.nodeName", "missing: a slice of node-local devices names its node")
		}
	}
	seen := map[string]int{}
	for i, dev := range s.Spec.Devices {
		p := joinIndex("spec.devices", i) + ".name"
		if dev.Name == "" {
			c.add(p, "missing: every device has a name")
			continue
		}
		if first, dup := seen[dev.Name]; dup {
			c.add(p, "duplicate device name %q: already spec.devices[%d]", dev.Name, first)
			continue
		}
		seen[dev.Name] = i
	}
	return len(*c.list) == before
}

// versionHint explains why an older version of a Kubernetes API is not read: a beta of
// the DRA API, or a version Kubernetes no longer serves (old samples still use them).
func versionHint(apiVersion string) string {
	if splitGroup(apiVersion) == "resource.k8s.io" && apiVersion != DRAAPIVersion {
		return " (" + DRAAPIVersion + " is GA since Kubernetes 1.34 and the only version Gantry reads: change apiVersion; from v1beta1 also move each claim request's fields under exactly)"
	}
	switch apiVersion {
	case "scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha1":
		return " (Kubernetes serves no PriorityClass under " + apiVersion + " since 1.22; scheduling.k8s.io/v1 has the same fields: change apiVersion)"
	}
	return ""
}
