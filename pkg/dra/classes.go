package dra

import (
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/cel"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// NVIDIA's GPU DRA driver's device classes.
const (
	ClassGPU = "gpu.nvidia.com"
	ClassMIG = "mig.nvidia.com"
)

// Classes are the cluster's DeviceClasses compiled (CEL selectors checked once), with the
// quota mappings, ready to compile the claims of pods.
type Classes struct {
	byName map[string]*deviceClass
	// quota maps a class name to the resource its devices count as (may hold
	// ProfilePlaceholder).
	quota map[string]resources.Name
	cache *cel.Cache
	// reps are one device per catalog model and MIG profile, to tell which kind of
	// device (and which MIG profile) a request's selectors pick.
	reps  []representative
	kinds *kindMemo
	// nodes are the cluster's nodes' devices (WithNodes), what All requests are
	// charged by (allmode.go).
	nodes      [][]nodeDevice
	nodesGiven bool
	charges    *chargeMemo
}

// deviceClass is one compiled DeviceClass.
type deviceClass struct {
	name      string
	selectors []selector
	config    []resourcev1.DeviceClassConfiguration
}

// NewClasses compiles DeviceClasses and quota mappings (nil mappings: the defaults,
// DefaultQuotaMappings). A class without a name or given twice, a selector that does not
// compile, or a class named by two mappings is an *Error naming the object and field.
// spec.extendedResourceName is ignored: Gantry serves extended resources through its
// own device model. Options add the cluster's nodes (WithNodes).
func NewClasses(cls []resourcev1.DeviceClass, m []QuotaMapping, opts ...ClassOption) (*Classes, error) {
	c := &Classes{byName: map[string]*deviceClass{}, cache: cel.NewCache(celCacheSize, cel.Features{}), reps: catalogRepresentatives(),
		kinds: &kindMemo{m: map[string]kindAnswer{}}, charges: &chargeMemo{m: map[string]int64{}}}
	for _, o := range opts {
		o(c)
	}
	for i := range cls {
		if err := c.addClass(&cls[i]); err != nil {
			return nil, err
		}
	}
	quota, err := compileMappings(m)
	if err != nil {
		return nil, err
	}
	c.quota = quota
	return c, nil
}

func (c *Classes) addClass(dc *resourcev1.DeviceClass) error {
	if dc.Name == "" {
		return classError("(unnamed)", "metadata.name", "a DeviceClass needs a name")
	}
	if _, dup := c.byName[dc.Name]; dup {
		return classError(dc.Name, "metadata.name", "DeviceClass is given twice")
	}
	sels, field, why := compileSelectors(c.cache, dc.Spec.Selectors, dc.Name, "spec.selectors")
	if why != "" {
		return classError(dc.Name, field, "%s", why)
	}
	c.byName[dc.Name] = &deviceClass{name: dc.Name, selectors: sels, config: dc.Spec.Config}
	return nil
}

// QuotaMapping counts the devices of the listed DeviceClasses against quota as Resource,
// one unit per device (Kueue's resources.deviceClassMappings). A Resource holding
// ProfilePlaceholder stands for one resource per MIG profile.
type QuotaMapping struct {
	Resource         resources.Name
	DeviceClassNames []string
}

// ProfilePlaceholder, in a mapping's Resource, is replaced by the request's MIG profile
// in the Kubernetes spelling: "nvidia.com/mig-<profile>" counts a 1g.10gb instance as
// nvidia.com/mig-1g.10gb, as the extended-resource path does.
const ProfilePlaceholder = "<profile>"

// DefaultQuotaMappings are what NewClasses uses without mappings: NVIDIA's gpu class as
// nvidia.com/gpu and its mig class per profile. A class no mapping names counts the same
// way by the kind of device it asks for, so a claim never escapes the quota its
// extended-resource twin is charged.
func DefaultQuotaMappings() []QuotaMapping {
	return []QuotaMapping{
		{Resource: resources.NvidiaGPU, DeviceClassNames: []string{ClassGPU}},
		{Resource: resources.Name(resources.MIGPrefix + ProfilePlaceholder), DeviceClassNames: []string{ClassMIG}},
	}
}

// compileMappings indexes mappings by class; a class may be named once.
func compileMappings(m []QuotaMapping) (map[string]resources.Name, error) {
	if m == nil {
		m = DefaultQuotaMappings()
	}
	out := map[string]resources.Name{}
	for i, qm := range m {
		field := fmt.Sprintf("deviceClassMappings[%d]", i)
		if qm.Resource == "" {
			return nil, &Error{Kind: KindQuotaMapping, Name: "(unnamed)", Field: field + ".name", Reason: "a mapping needs a resource name"}
		}
		if strings.Count(string(qm.Resource), ProfilePlaceholder) > 1 {
			return nil, &Error{Kind: KindQuotaMapping, Name: string(qm.Resource), Field: field + ".name", Reason: "at most one " + ProfilePlaceholder}
		}
		for k, class := range qm.DeviceClassNames {
			f := fmt.Sprintf("%s.deviceClassNames[%d]", field, k)
			if class == "" {
				return nil, &Error{Kind: KindQuotaMapping, Name: string(qm.Resource), Field: f, Reason: "empty DeviceClass name"}
			}
			if other, dup := out[class]; dup {
				return nil, &Error{Kind: KindQuotaMapping, Name: string(qm.Resource), Field: f, Reason: fmt.Sprintf("DeviceClass %s is already mapped to %s", class, other)}
			}
			out[class] = qm.Resource
		}
	}
	return out, nil
}

// quotaName is the resource one device of class (of kind k, MIG profile profile)
// counts as; "" when the class's mapping wants a MIG profile and k is whole GPUs.
func (c *Classes) quotaName(class string, k deviceKind, profile string) resources.Name {
	name, ok := c.quota[class]
	if !ok {
		if k == kindMIG {
			return resources.MIGResource(profile)
		}
		return resources.NvidiaGPU
	}
	if !strings.Contains(string(name), ProfilePlaceholder) {
		return name
	}
	if k != kindMIG {
		return ""
	}
	spelled := strings.TrimPrefix(string(resources.MIGResource(profile)), resources.MIGPrefix)
	return resources.Name(strings.Replace(string(name), ProfilePlaceholder, spelled, 1))
}
