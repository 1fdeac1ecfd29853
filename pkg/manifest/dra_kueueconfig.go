package manifest

import (
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kueueConfigVersions are the apiVersions of Kueue's manager Configuration.
func kueueConfigVersions() []string {
	return []string{"config.kueue.x-k8s.io/v1beta1", "config.kueue.x-k8s.io/v1beta2"}
}

// kueueConfigWire is Kueue's Configuration as far as Gantry reads it: the DRA quota
// mappings under resources.deviceClassMappings and waitForPodsReady
// (kueueconfig_podsready.go), checked strictly. The manager's other
// settings (webhooks, integrations, leader election...) are listed so a real Kueue
// config file loads, and are not read: they configure Kueue's process, not scheduling
// decisions Gantry replays.
type kueueConfigWire struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Resources  *struct {
		DeviceClassMappings []struct {
			Name             string   `json:"name"`
			DeviceClassNames []string `json:"deviceClassNames"`
		} `json:"deviceClassMappings"`
		ExcludeResourcePrefixes []string `json:"excludeResourcePrefixes"`
		Transformations         []any    `json:"transformations"`
	} `json:"resources"`

	Namespace                    any            `json:"namespace"`
	ManageJobsWithoutQueueName   any            `json:"manageJobsWithoutQueueName"`
	ManagedJobsNamespaceSelector any            `json:"managedJobsNamespaceSelector"`
	InternalCertManagement       any            `json:"internalCertManagement"`
	WaitForPodsReady             *podsReadyWire `json:"waitForPodsReady"`
	ClientConnection             any            `json:"clientConnection"`
	Integrations                 any            `json:"integrations"`
	QueueVisibility              any            `json:"queueVisibility"`
	MultiKueue                   any            `json:"multiKueue"`
	FairSharing                  any            `json:"fairSharing"`
	AdmissionFairSharing         any            `json:"admissionFairSharing"`
	FeatureGates                 any            `json:"featureGates"`
	ObjectRetentionPolicies      any            `json:"objectRetentionPolicies"`
	Health                       any            `json:"health"`
	Metrics                      any            `json:"metrics"`
	Webhook                      any            `json:"webhook"`
	LeaderElection               any            `json:"leaderElection"`
	Controller                   any            `json:"controller"`
	PprofBindAddress             any            `json:"pprofBindAddress"`
	WebhookAddress               any            `json:"webhookAddress"`
	TLS                          any            `json:"tls"`
}

// kueueConfiguration reads the DeviceClass quota mappings of a Kueue Configuration:
// each maps DeviceClasses to the quota resource their devices count as (one unit per
// device). Transformations and excluded prefixes change what Kueue counts and are not
// replayed: setting them is an error rather than a silently different quota.
func (l *loader) kueueConfiguration(d document, c errs) {
	var in kueueConfigWire
	if !decode(d, &in, false, c) {
		return
	}
	l.setPodsReady(podsReadyOf(d.v.str("apiVersion"), in.WaitForPodsReady, in.FeatureGates, c), c)
	if in.Resources == nil {
		return
	}
	if len(in.Resources.Transformations) > 0 {
		c.add("resources.transformations", "not replayed by Gantry: quota would differ from Kueue's; remove them to load this file")
	}
	if len(in.Resources.ExcludeResourcePrefixes) > 0 {
		c.add("resources.excludeResourcePrefixes", "not replayed by Gantry: quota would differ from Kueue's; remove them to load this file")
	}
	for i, m := range in.Resources.DeviceClassMappings {
		p := joinIndex("resources.deviceClassMappings", i)
		if m.Name == "" {
			c.add(p+".name", "missing: the quota resource the devices count as (e.g. nvidia.com/gpu)")
			continue
		}
		if len(m.DeviceClassNames) == 0 {
			c.add(p+".deviceClassNames", "missing: at least one DeviceClass")
			continue
		}
		l.addQuotaMapping(api.DeviceClassMapping{Resource: resources.Name(m.Name), DeviceClassNames: m.DeviceClassNames, Source: c.src}, p, c)
	}
}

// addQuotaMapping records a mapping; a DeviceClass mapped twice is an error at the
// second mapping (which resource would it count as?).
func (l *loader) addQuotaMapping(m api.DeviceClassMapping, path string, c errs) {
	for j, class := range m.DeviceClassNames {
		for _, prev := range l.objs.QuotaMappings {
			for _, pc := range prev.DeviceClassNames {
				if pc == class {
					c.add(joinIndex(path+".deviceClassNames", j), "DeviceClass %q is already mapped to %s at %s", class, prev.Resource, prev.Source)
					return
				}
			}
		}
	}
	l.objs.QuotaMappings = append(l.objs.QuotaMappings, m)
}
