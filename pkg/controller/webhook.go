package controller

import (
	"context"
	"fmt"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/manifest"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Gantry's admission webhooks, served by the manager's webhook server:
//   - /mutate-batch-v1-job suspends a Job created with a queue label, so its pods wait
//     for admission instead of racing it (Kueue's behaviour; without the webhook the
//     user must set spec.suspend themselves). A Job created without one, in a namespace
//     with a LocalQueue named "default", is labelled for that queue first (Kueue's
//     LocalQueueDefaulting, the loader's rule); its webhook configuration must then see
//     Jobs without the label too;
//   - /mutate--v1-pod names Gantry as the scheduler of the pods of queued Deployments,
//     StatefulSets and LeaderWorkerSets on create (webhook_pods.go);
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
type jobSuspender struct {
	// queues reads LocalQueues, to find a namespace's default one.
	queues client.Reader
}

var _ admission.CustomDefaulter = jobSuspender{}

func (s jobSuspender) Default(ctx context.Context, obj runtime.Object) error {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return fmt.Errorf("webhook %s: got %T, want a Job", WebhookPathJob, obj)
	}
	if JobQueueName(&job.ObjectMeta) == "" {
		queue, err := s.defaultQueue(ctx, job)
		if err != nil || queue == "" {
			return err // "": not Gantry's, left alone
		}
		if job.Labels == nil {
			job.Labels = map[string]string{}
		}
		job.Labels[api.LabelKueueQueueName] = queue
	}
	suspend := true
	job.Spec.Suspend = &suspend
	return nil
}

// defaultQueue is the LocalQueue a Job without a queue label goes to: "default" of its
// namespace when it exists and the Job is not part of a job Gantry queues (kindsync.go
// queueOf, the same rule for the other kinds); "" otherwise.
func (s jobSuspender) defaultQueue(ctx context.Context, job *batchv1.Job) (string, error) {
	if s.queues == nil || partOfQueuedJob(job.OwnerReferences) {
		return "", nil
	}
	ok, err := localQueueExists(ctx, s.queues, job.Namespace, manifest.DefaultLocalQueue)
	if err != nil {
		return "", fmt.Errorf("webhook %s: Job %s/%s: looking for LocalQueue %q: %w", WebhookPathJob, job.Namespace, job.Name, manifest.DefaultLocalQueue, err)
	}
	if !ok {
		return "", nil
	}
	return manifest.DefaultLocalQueue, nil
}

// localQueueExists reports whether LocalQueue ns/name exists, gantry.dev's or Kueue's
// (under any version Gantry reads; one whose CRD is not installed does not exist).
func localQueueExists(ctx context.Context, r client.Reader, ns, name string) (bool, error) {
	key := client.ObjectKey{Namespace: ns, Name: name}
	err := r.Get(ctx, key, &v1alpha1.LocalQueue{})
	if err == nil || !apierrors.IsNotFound(err) {
		return err == nil, err
	}
	for _, v := range kueueVersions() {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: kueueGroup, Version: v, Kind: "LocalQueue"})
		err := r.Get(ctx, key, u)
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		default:
			return false, err
		}
	}
	return false, nil
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
	srv.Register(WebhookPathJob, admission.WithCustomDefaulter(scheme, &batchv1.Job{}, jobSuspender{queues: mgr.GetClient()}))
	srv.Register(WebhookPathPod, admission.WithCustomDefaulter(scheme, &corev1.Pod{}, podScheduler{owners: mgr.GetAPIReader()})) // webhook_pods.go
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
