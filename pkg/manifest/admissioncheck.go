package manifest

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
	"k8s.io/apimachinery/pkg/util/validation"
)

// admissionCheckKinds are Kueue's admission check kinds Load reads: the AdmissionCheck
// and the ProvisioningRequestConfig its parameters name. They have no gantry.dev form.
func admissionCheckKinds() []kindEntry {
	v := []string{kueueV1beta1, kueueV1beta2}
	return []kindEntry{
		{v, "AdmissionCheck", (*loader).admissionCheck},
		{v, "ProvisioningRequestConfig", (*loader).provisioningRequestConfig},
	}
}

// admissionCheck reads an AdmissionCheck. Only the ProvisioningRequest controller is
// run; a check of another controller would never turn Ready, so it is refused.
func (l *loader) admissionCheck(d document, c errs) {
	var in admissionCheckWire
	if !decode(d, &in, false, c) {
		return
	}
	clusterScoped(in.ObjectMeta, c)
	out := api.AdmissionCheck{Meta: metaOf(in.ObjectMeta, c.src, ""), ControllerName: in.Spec.ControllerName}
	switch in.Spec.ControllerName {
	case "":
		c.add("spec.controllerName", "missing: want %s", api.ProvisioningRequestControllerName)
	case api.ProvisioningRequestControllerName:
	default:
		c.add("spec.controllerName", "controller %q is not supported: Gantry runs only the ProvisioningRequest check (%s)", in.Spec.ControllerName, api.ProvisioningRequestControllerName)
	}
	if in.Spec.RetryDelayMinutes != nil && in.APIVersion == kueueV1beta2 {
		c.add("spec.retryDelayMinutes", "not a field of %s (removed from Kueue's API; use a ProvisioningRequestConfig's retryStrategy)", kueueV1beta2)
	}
	out.Config = checkConfigName(in.Spec.Parameters, c)
	if l.register("AdmissionCheck", out.Meta, c) {
		l.objs.AdmissionChecks.Checks = append(l.objs.AdmissionChecks.Checks, out)
	}
}

// checkConfigName reads spec.parameters, which must name a ProvisioningRequestConfig:
// without one Kueue keeps the check inactive and its ClusterQueue admits nothing.
func checkConfigName(p *checkParameters, c errs) string {
	if p == nil {
		c.add("spec.parameters", "missing: a ProvisioningRequest check needs parameters naming a ProvisioningRequestConfig")
		return ""
	}
	if p.APIGroup != "kueue.x-k8s.io" {
		c.add("spec.parameters.apiGroup", "%q: want kueue.x-k8s.io", p.APIGroup)
	}
	if p.Kind != "ProvisioningRequestConfig" {
		c.add("spec.parameters.kind", "%q: want ProvisioningRequestConfig", p.Kind)
	}
	if p.Name == "" {
		c.add("spec.parameters.name", "missing: the ProvisioningRequestConfig's name")
	}
	return p.Name
}

// provisioningRequestConfig reads a ProvisioningRequestConfig with Kueue's defaults and
// its API validation.
func (l *loader) provisioningRequestConfig(d document, c errs) {
	var in provReqConfigWire
	if !decode(d, &in, false, c) {
		return
	}
	clusterScoped(in.ObjectMeta, c)
	s := in.Spec
	out := api.ProvisioningRequestConfig{
		Meta:       metaOf(in.ObjectMeta, c.src, ""),
		ClassName:  provisioningClass(s.ProvisioningClassName, c),
		Parameters: s.Parameters,
		Retry:      api.DefaultProvisioningRetry(),
	}
	if len(s.Parameters) > 100 {
		c.add("spec.parameters", "%d entries: at most 100", len(s.Parameters))
	}
	out.ManagedResources = managedResources(s.ManagedResources, c)
	if r := s.RetryStrategy; r != nil {
		out.Retry = provisioningRetry(r.BackoffLimitCount, r.BackoffBaseSeconds, r.BackoffMaxSeconds, c)
	}
	if u := s.PodSetUpdates; u != nil {
		if len(u.NodeSelector) > 8 {
			c.add("spec.podSetUpdates.nodeSelector", "%d entries: at most 8", len(u.NodeSelector))
		}
		for i, ns := range u.NodeSelector {
			p := joinIndex("spec.podSetUpdates.nodeSelector", i)
			if ns.Key == "" {
				c.add(p+".key", "missing")
			}
			if ns.ValueFromProvisioningClassDetail == "" {
				c.add(p+".valueFromProvisioningClassDetail", "missing")
			}
			out.PodSetUpdates = append(out.PodSetUpdates, api.PodSetNodeSelectorUpdate{Key: ns.Key, ValueFromProvisioningClassDetail: ns.ValueFromProvisioningClassDetail})
		}
	}
	if m := s.PodSetMergePolicy; m != nil {
		switch *m {
		case "IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements":
			out.PodSetMergePolicy = *m
		default:
			c.add("spec.podSetMergePolicy", "unknown value %q: want IdenticalPodTemplates or IdenticalWorkloadSchedulingRequirements", *m)
		}
	}
	if l.register("ProvisioningRequestConfig", out.Meta, c) {
		l.objs.AdmissionChecks.Configs = append(l.objs.AdmissionChecks.Configs, out)
	}
}

// provisioningClass requires one of the classes Gantry simulates.
func provisioningClass(name string, c errs) string {
	switch name {
	case api.ProvisioningClassCheckCapacity, api.ProvisioningClassAtomicScaleUp:
		return name
	case "":
		c.add("spec.provisioningClassName", "missing: want %s or %s", api.ProvisioningClassCheckCapacity, api.ProvisioningClassAtomicScaleUp)
	default:
		c.add("spec.provisioningClassName", "class %q is not simulated: want %s or %s", name, api.ProvisioningClassCheckCapacity, api.ProvisioningClassAtomicScaleUp)
	}
	return name
}

func managedResources(in []string, c errs) []resources.Name {
	if len(in) > 100 {
		c.add("spec.managedResources", "%d entries: at most 100", len(in))
	}
	out := make([]resources.Name, 0, len(in))
	seen := map[string]bool{}
	for i, r := range in {
		p := joinIndex("spec.managedResources", i)
		switch {
		case len(validation.IsQualifiedName(r)) > 0:
			c.add(p, "%q is not a resource name: %s", r, strings.Join(validation.IsQualifiedName(r), "; "))
		case seen[r]:
			c.add(p, "%q listed twice", r)
		}
		seen[r] = true
		out = append(out, resources.Name(r))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// provisioningRetry reads retryStrategy; a field left out takes Kueue's default.
func provisioningRetry(limit, base, maxSec *int32, c errs) api.ProvisioningRetry {
	out := api.DefaultProvisioningRetry()
	if limit != nil {
		if *limit < 0 {
			c.add("spec.retryStrategy.backoffLimitCount", "%d: must not be negative", *limit)
		}
		out.BackoffLimitCount = int(*limit)
	}
	seconds := func(v *int32, field string, into *time.Duration) {
		if v == nil {
			return
		}
		if *v < 0 {
			c.add("spec.retryStrategy."+field, "%d: must not be negative", *v)
			return
		}
		*into = time.Duration(*v) * time.Second
	}
	seconds(base, "backoffBaseSeconds", &out.BackoffBase)
	seconds(maxSec, "backoffMaxSeconds", &out.BackoffMax)
	if out.BackoffMax < out.BackoffBase {
		c.add("spec.retryStrategy.backoffMaxSeconds", "%s: must not be below backoffBaseSeconds (%s)", fmtSeconds(out.BackoffMax), fmtSeconds(out.BackoffBase))
	}
	return out
}

func fmtSeconds(d time.Duration) string { return fmt.Sprintf("%ds", int64(d/time.Second)) }
