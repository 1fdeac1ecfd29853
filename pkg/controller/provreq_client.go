package controller

import (
	"context"
	"fmt"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// provReqs makes, reads and deletes a workload's ProvisioningRequests and their
// PodTemplates on the API server.
type provReqs struct{ c client.Client }

// ensure creates the templates, then the request (the autoscaler reads the templates
// when it sees the request); objects that exist already are kept, so a pass may call
// it again after a restart.
func (p provReqs) ensure(ctx context.Context, templates []*corev1.PodTemplate, pr *unstructured.Unstructured) error {
	for _, pt := range templates {
		// Create fills in the object it is given: write copies, so the same objects can
		// be ensured again.
		if err := p.c.Create(ctx, pt.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create PodTemplate %s/%s: %w", pt.Namespace, pt.Name, err)
		}
	}
	if err := p.c.Create(ctx, pr.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create ProvisioningRequest %s/%s: %w", pr.GetNamespace(), pr.GetName(), err)
	}
	return nil
}

// conditions reads a request's conditions; found is false when it does not exist.
func (p provReqs) conditions(ctx context.Context, namespace, name string) (provReqConditions, bool, error) {
	pr := &unstructured.Unstructured{}
	pr.SetGroupVersionKind(provReqGVK())
	if err := p.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, pr); err != nil {
		if apierrors.IsNotFound(err) {
			return provReqConditions{}, false, nil
		}
		return provReqConditions{}, false, fmt.Errorf("get ProvisioningRequest %s/%s: %w", namespace, name, err)
	}
	return readProvReqConditions(pr), true, nil
}

// remove deletes every request and template made for wl (it finished or was evicted:
// the capacity they hold is no longer wanted).
func (p provReqs) remove(ctx context.Context, wl *v1alpha1.Workload) error {
	sel := client.MatchingLabels{labelProvReqWorkload: string(wl.UID)}
	in := client.InNamespace(wl.Namespace)
	prs := &unstructured.UnstructuredList{}
	prs.SetGroupVersionKind(provReqGVK().GroupVersion().WithKind("ProvisioningRequestList"))
	if err := p.c.List(ctx, prs, in, sel); err != nil {
		return fmt.Errorf("list ProvisioningRequests of %s/%s: %w", wl.Namespace, wl.Name, err)
	}
	for i := range prs.Items {
		if err := p.c.Delete(ctx, &prs.Items[i]); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete ProvisioningRequest %s/%s: %w", wl.Namespace, prs.Items[i].GetName(), err)
		}
	}
	pts := &corev1.PodTemplateList{}
	if err := p.c.List(ctx, pts, in, sel); err != nil {
		return fmt.Errorf("list PodTemplates of %s/%s: %w", wl.Namespace, wl.Name, err)
	}
	for i := range pts.Items {
		if err := p.c.Delete(ctx, &pts.Items[i]); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete PodTemplate %s/%s: %w", wl.Namespace, pts.Items[i].Name, err)
		}
	}
	return nil
}
