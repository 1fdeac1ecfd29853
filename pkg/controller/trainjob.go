package controller

import (
	"context"
	"fmt"
	"strconv"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/manifest"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kubeflow Trainer v2 (trainer.kubeflow.org/v1alpha1): a TrainJob's pods are the
// replicated jobs of the JobSet template of the runtime its spec.runtimeRef names, a
// ClusterTrainingRuntime (the default kind, cluster-scoped) or a TrainingRuntime of the
// TrainJob's namespace. Trainer makes a JobSet named after the TrainJob, so its pods
// carry JobSet's labels valued with the TrainJob's name.
// KindTrainJob is the owner kind of a TrainJob's Workload.
const KindTrainJob = "TrainJob"

var (
	trainJobGVK               = schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: KindTrainJob}
	trainingRuntimeGVK        = trainJobGVK.GroupVersion().WithKind("TrainingRuntime")
	clusterTrainingRuntimeGVK = trainJobGVK.GroupVersion().WithKind("ClusterTrainingRuntime")
)

// ReasonRuntimeNotFound is the Warning event of a TrainJob whose runtime is missing.
const ReasonRuntimeNotFound = "RuntimeNotFound"

func trainJobKind() jobKind {
	return jobKind{
		GVK:         trainJobGVK,
		SuspendPath: []string{"spec", "suspend"}, PodLabel: jobSetNameLabel,
		PodSetOf: jobSetPodSet,
		// Trainer v2.0 TrainJob conditions (pkg/apis/trainer/v1alpha1: TrainJobComplete,
		// TrainJobFailed).
		Finished: conditionFinished("Complete", "Failed"),
		Convert:  convertTrainJob,
		Related:  []schema.GroupVersionKind{clusterTrainingRuntimeGVK, trainingRuntimeGVK},
	}
}

// relatedMissingError says that an object a job's conversion needs is not there: the
// job stays pending (suspended, no Workload) until it is.
type relatedMissingError struct {
	job, what string // "TrainJob ns/x", `ClusterTrainingRuntime "torch"`
}

func (e *relatedMissingError) Error() string {
	return fmt.Sprintf("%s: spec.runtimeRef: %s not found: its pods are those of the runtime's JobSet template; the job waits for it", e.job, e.what)
}

// convertTrainJob reads the runtime the TrainJob names from r and converts both with
// the loader's reader of the same pair (manifest.WorkloadOfTrainJob).
func convertTrainJob(ctx context.Context, r client.Reader, obj map[string]any) (*api.Workload, error) {
	u := &unstructured.Unstructured{Object: obj}
	gvk, key := trainJobRuntimeRef(u)
	if key.Name == "" || gvk != clusterTrainingRuntimeGVK && gvk != trainingRuntimeGVK {
		// Nothing to read: the reader of the TrainJob alone says what is wrong.
		_, err := manifest.WorkloadOfObject(objectSource, obj)
		return nil, err
	}
	rt := &unstructured.Unstructured{}
	rt.SetGroupVersionKind(gvk)
	err := r.Get(ctx, key, rt)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) { // no such runtime, or no runtime CRD
		return nil, &relatedMissingError{job: "TrainJob " + u.GetNamespace() + "/" + u.GetName(),
			what: gvk.Kind + " " + strconv.Quote(key.Name)}
	}
	if err != nil {
		return nil, fmt.Errorf("TrainJob %s/%s: read its %s %q: %w", u.GetNamespace(), u.GetName(), gvk.Kind, key.Name, err)
	}
	rt.SetGroupVersionKind(gvk) // a cached object may come without its TypeMeta
	return manifest.WorkloadOfTrainJob(objectSource, obj, rt.Object)
}

// trainJobRuntimeRef is the runtime a TrainJob names: its kind (Trainer's default
// ClusterTrainingRuntime) and key (a TrainingRuntime lives in the TrainJob's namespace).
// A kind Trainer does not know is returned as named; the reader refuses it.
func trainJobRuntimeRef(u *unstructured.Unstructured) (schema.GroupVersionKind, client.ObjectKey) {
	name, _, _ := unstructured.NestedString(u.Object, "spec", "runtimeRef", "name")
	kind, found, _ := unstructured.NestedString(u.Object, "spec", "runtimeRef", "kind")
	if !found || kind == "" {
		kind = clusterTrainingRuntimeGVK.Kind
	}
	key := client.ObjectKey{Name: name}
	if kind != clusterTrainingRuntimeGVK.Kind {
		key.Namespace = u.GetNamespace()
	}
	return trainJobGVK.GroupVersion().WithKind(kind), key
}

// refreshPending drops the Workload of a job not admitted yet whose pods, converted
// again, are no longer the Workload's: a kind with related objects (a TrainJob's
// runtime) changes without its own object changing, and Kueue too recreates a pending
// TrainJob's Workload when its runtime changed. The next pass makes the Workload
// anew. It reports whether it dropped it; a runtime gone missing meanwhile leaves the
// Workload as it is.
func (ctl *Controller) refreshPending(ctx context.Context, k jobKind, u *unstructured.Unstructured, queue string, wl *v1alpha1.Workload) (bool, error) {
	if k.Convert == nil || wl.Status.Admission != nil || wl.DeletionTimestamp != nil {
		return false, nil
	}
	want, err := workloadForObject(ctx, ctl.watch.informers, k, withQueueLabel(u, queue))
	if err != nil || equality.Semantic.DeepEqual(want.Spec.PodSets, wl.Spec.PodSets) {
		return false, nil
	}
	pre := client.Preconditions{UID: &wl.UID, ResourceVersion: &wl.ResourceVersion}
	if err := ctl.c.Delete(ctx, wl, pre); err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("workload %s: drop it for its job's new pods: %w", wlKey(wl), err)
	}
	ctl.log.V(1).Info("pending workload made again: its job's pods changed", "workload", wlKey(wl))
	return true, nil
}
