package controller

import (
	"context"
	"fmt"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/manifest"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Gantry's admission webhooks, served by the manager's webhook server:
//   - /mutate-batch-v1-job suspends a Job created with a queue label, so its pods wait
//     for admission instead of racing it (Kueue's behaviour; without the webhook the
//     user must set spec.suspend themselves);
//   - /validate-gantry-dev-v1alpha1-<kind> refuses a queue object whose own fields break
//     the rules the schema cannot say (manifest.CheckTyped: the same checks `gantry
//     validate` makes), naming the field. References to other objects are not checked:
//     they may be created later, and the controller reports them on the queue's status.

// The paths the webhooks are served on (the chart's webhook configurations and the
// tests name them).
const (
	WebhookPathJob                   = "/mutate-batch-v1-job"
	WebhookPathClusterQueue          = "/validate-gantry-dev-v1alpha1-clusterqueue"
	WebhookPathLocalQueue            = "/validate-gantry-dev-v1alpha1-localqueue"
	WebhookPathResourceFlavor        = "/validate-gantry-dev-v1alpha1-resourceflavor"
	WebhookPathCohort                = "/validate-gantry-dev-v1alpha1-cohort"
	WebhookPathWorkloadPriorityClass = "/validate-gantry-dev-v1alpha1-workloadpriorityclass"
	WebhookPathTopology              = "/validate-gantry-dev-v1alpha1-topology"
)

// jobSuspender suspends queued Jobs on create.
type jobSuspender struct{}

var _ admission.CustomDefaulter = jobSuspender{}

func (jobSuspender) Default(_ context.Context, obj runtime.Object) error {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return fmt.Errorf("webhook %s: got %T, want a Job", WebhookPathJob, obj)
	}
	if JobQueueName(&job.ObjectMeta) == "" {
		return nil // not Gantry's: left alone
	}
	suspend := true
	job.Spec.Suspend = &suspend
	return nil
}

// queueValidator checks one queue object with manifest.CheckTyped.
type queueValidator struct {
	// typed puts the object in a manifest.Typed, or says it is of the wrong kind.
	typed func(runtime.Object) (manifest.Typed, bool)
}

var _ admission.CustomValidator = queueValidator{}

func (v queueValidator) check(obj runtime.Object) (admission.Warnings, error) {
	in, ok := v.typed(obj)
	if !ok {
		return nil, fmt.Errorf("validating webhook: unexpected object %T", obj)
	}
	return nil, manifest.CheckTyped("admission webhook", in)
}

func (v queueValidator) ValidateCreate(_ context.Context, obj runtime.Object) (admission.Warnings, error) {
	return v.check(obj)
}

func (v queueValidator) ValidateUpdate(_ context.Context, _, obj runtime.Object) (admission.Warnings, error) {
	return v.check(obj)
}

func (queueValidator) ValidateDelete(context.Context, runtime.Object) (admission.Warnings, error) {
	return nil, nil
}

// typedAs wraps one object of type T into a manifest.Typed.
func typedAs[T client.Object](set func(*manifest.Typed, T)) func(runtime.Object) (manifest.Typed, bool) {
	return func(obj runtime.Object) (manifest.Typed, bool) {
		o, ok := obj.(T)
		if !ok {
			return manifest.Typed{}, false
		}
		var in manifest.Typed
		set(&in, o)
		return in, true
	}
}

// registerWebhooks adds the webhooks to the manager's webhook server.
func registerWebhooks(mgr ctrl.Manager) {
	srv, scheme := mgr.GetWebhookServer(), mgr.GetScheme()
	srv.Register(WebhookPathJob, admission.WithCustomDefaulter(scheme, &batchv1.Job{}, jobSuspender{}))
	for _, v := range []struct {
		path string
		obj  runtime.Object
		val  queueValidator
	}{
		{WebhookPathClusterQueue, &v1alpha1.ClusterQueue{}, queueValidator{typedAs(func(in *manifest.Typed, o *v1alpha1.ClusterQueue) { in.ClusterQueues = append(in.ClusterQueues, o) })}},
		{WebhookPathLocalQueue, &v1alpha1.LocalQueue{}, queueValidator{typedAs(func(in *manifest.Typed, o *v1alpha1.LocalQueue) { in.LocalQueues = append(in.LocalQueues, o) })}},
		{WebhookPathResourceFlavor, &v1alpha1.ResourceFlavor{}, queueValidator{typedAs(func(in *manifest.Typed, o *v1alpha1.ResourceFlavor) { in.Flavors = append(in.Flavors, o) })}},
		{WebhookPathCohort, &v1alpha1.Cohort{}, queueValidator{typedAs(func(in *manifest.Typed, o *v1alpha1.Cohort) { in.Cohorts = append(in.Cohorts, o) })}},
		{WebhookPathWorkloadPriorityClass, &v1alpha1.WorkloadPriorityClass{}, queueValidator{typedAs(func(in *manifest.Typed, o *v1alpha1.WorkloadPriorityClass) {
			in.WorkloadPriorityClasses = append(in.WorkloadPriorityClasses, o)
		})}},
		{WebhookPathTopology, &v1alpha1.Topology{}, queueValidator{typedAs(func(in *manifest.Typed, o *v1alpha1.Topology) { in.Topologies = append(in.Topologies, o) })}},
	} {
		srv.Register(v.path, admission.WithCustomValidator(scheme, v.obj, v.val))
	}
}
