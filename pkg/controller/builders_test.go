package controller

import (
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Fluent builders for the objects the tests create: MakeJob("train", "ns").Queue("lq").
// Pods(4).GPUs(2).Obj().

type jobWrapper struct{ batchv1.Job }

func MakeJob(name, ns string) *jobWrapper {
	return &jobWrapper{batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{}},
		Spec: batchv1.JobSpec{
			Suspend: ptr.To(true), Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				SchedulerName: SchedulerName, RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "main", Image: "trainer",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}}},
			}},
		},
	}}
}

func (j *jobWrapper) Queue(q string) *jobWrapper { j.Labels[api.LabelGantryQueueName] = q; return j }
func (j *jobWrapper) KueueQueue(q string) *jobWrapper {
	j.Labels[api.LabelKueueQueueName] = q
	return j
}
func (j *jobWrapper) Priority(class string) *jobWrapper {
	j.Labels[api.LabelKueuePriority] = class
	return j
}
func (j *jobWrapper) Pods(n int32) *jobWrapper {
	j.Spec.Parallelism, j.Spec.Completions = ptr.To(n), ptr.To(n)
	return j
}
func (j *jobWrapper) Request(name corev1.ResourceName, q string) *jobWrapper {
	j.Spec.Template.Spec.Containers[0].Resources.Requests[name] = resource.MustParse(q)
	return j
}

// GPUs sets a limit, the way users ask for extended resources.
func (j *jobWrapper) GPUs(n string) *jobWrapper {
	j.Spec.Template.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"] = resource.MustParse(n)
	return j
}
func (j *jobWrapper) Obj() *batchv1.Job { return j.Job.DeepCopy() }

type nodeWrapper struct{ corev1.Node }

// MakeNode is a ready node with room for pods and plenty of CPU and memory.
func MakeNode(name string) *nodeWrapper {
	return &nodeWrapper{corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("512Gi"),
				"pods": resource.MustParse("110")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}}
}

// H100 gives the node n whole H100 GPUs as GFD and the device plugin report them.
func (n *nodeWrapper) H100(count int) *nodeWrapper {
	n.Labels["nvidia.com/gpu.product"] = "NVIDIA-H100-80GB-HBM3"
	n.Labels["nvidia.com/gpu.count"] = resource.NewQuantity(int64(count), resource.DecimalSI).String()
	n.Status.Capacity["nvidia.com/gpu"] = *resource.NewQuantity(int64(count), resource.DecimalSI)
	return n
}

// A100MIG gives the node count A100-80GB GPUs partitioned all-1g.10gb (mixed strategy).
func (n *nodeWrapper) A100MIG(count int) *nodeWrapper {
	n.Labels["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-80GB"
	n.Labels["nvidia.com/gpu.count"] = resource.NewQuantity(int64(count), resource.DecimalSI).String()
	n.Labels["nvidia.com/mig.capable"] = "true"
	n.Labels["nvidia.com/mig.strategy"] = "mixed"
	n.Labels["nvidia.com/mig.config"] = "all-1g.10gb"
	n.Status.Capacity["nvidia.com/mig-1g.10gb"] = *resource.NewQuantity(int64(7*count), resource.DecimalSI)
	return n
}
func (n *nodeWrapper) Label(k, v string) *nodeWrapper { n.Labels[k] = v; return n }
func (n *nodeWrapper) Obj() *corev1.Node              { return n.Node.DeepCopy() }

type cqWrapper struct{ v1alpha1.ClusterQueue }

func MakeClusterQueue(name string) *cqWrapper {
	return &cqWrapper{v1alpha1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}}}
}
func (c *cqWrapper) Cohort(name string) *cqWrapper { c.Spec.Cohort = name; return c }

// Quota adds a resource group covering the named resources with one flavor's nominal
// quotas given as name=quantity pairs.
func (c *cqWrapper) Quota(flavor string, pairs ...string) *cqWrapper {
	rg := v1alpha1.ResourceGroup{Flavors: []v1alpha1.FlavorQuotas{{Name: flavor}}}
	for i := 0; i+1 < len(pairs); i += 2 {
		rg.CoveredResources = append(rg.CoveredResources, corev1.ResourceName(pairs[i]))
		rg.Flavors[0].Resources = append(rg.Flavors[0].Resources,
			v1alpha1.ResourceQuota{Name: corev1.ResourceName(pairs[i]), NominalQuota: resource.MustParse(pairs[i+1])})
	}
	c.Spec.ResourceGroups = append(c.Spec.ResourceGroups, rg)
	return c
}

// Flavors adds one resource group covering resource with the given flavors in order,
// each with the same nominal quota: admission tries them in this order.
func (c *cqWrapper) Flavors(name corev1.ResourceName, quota string, flavors ...string) *cqWrapper {
	rg := v1alpha1.ResourceGroup{CoveredResources: []corev1.ResourceName{name}}
	for _, f := range flavors {
		rg.Flavors = append(rg.Flavors, v1alpha1.FlavorQuotas{Name: f,
			Resources: []v1alpha1.ResourceQuota{{Name: name, NominalQuota: resource.MustParse(quota)}}})
	}
	c.Spec.ResourceGroups = append(c.Spec.ResourceGroups, rg)
	return c
}

// Annotate sets one of Gantry's queue extensions (placement scorers, disruption budget).
func (c *cqWrapper) Annotate(k, v string) *cqWrapper {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[k] = v
	return c
}

func (c *cqWrapper) Preemption(within, reclaim v1alpha1.PreemptionPolicy) *cqWrapper {
	c.Spec.Preemption = &v1alpha1.ClusterQueuePreemption{WithinClusterQueue: within, ReclaimWithinCohort: reclaim}
	return c
}
func (c *cqWrapper) Obj() *v1alpha1.ClusterQueue { return c.ClusterQueue.DeepCopy() }

func MakeLocalQueue(name, ns, cq string) *v1alpha1.LocalQueue {
	return &v1alpha1.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.LocalQueueSpec{ClusterQueue: cq}}
}

func MakeFlavor(name string) *v1alpha1.ResourceFlavor {
	return &v1alpha1.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// MakeFlavorOn is a flavor whose nodes carry the label key=value.
func MakeFlavorOn(name, key, value string) *v1alpha1.ResourceFlavor {
	f := MakeFlavor(name)
	f.Spec.NodeLabels = map[string]string{key: value}
	return f
}

func MakePriorityClass(name string, value int32) *v1alpha1.WorkloadPriorityClass {
	return &v1alpha1.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
}
