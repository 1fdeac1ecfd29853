package controller

import (
	"context"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// assumingClient is the controller's client. Every Workload it writes successfully
// (create, update, patch, status) is recorded in the cache as the server returned it,
// so the next pass sees the controller's own decisions before the informer delivers
// them (see workloadStore).
type assumingClient struct {
	client.Client
	cache *stateCache
}

func (a assumingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return a.wrote(obj, a.Client.Create(ctx, obj, opts...))
}

func (a assumingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return a.wrote(obj, a.Client.Update(ctx, obj, opts...))
}

func (a assumingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return a.wrote(obj, a.Client.Patch(ctx, obj, patch, opts...))
}

func (a assumingClient) Status() client.SubResourceWriter {
	return assumingStatusWriter{SubResourceWriter: a.Client.Status(), wrote: a.wrote}
}

// wrote assumes obj when it is a Workload the server took; it passes err through.
func (a assumingClient) wrote(obj client.Object, err error) error {
	if wl, ok := obj.(*v1alpha1.Workload); ok && err == nil {
		a.cache.assume(wl.DeepCopy()) // the caller keeps its object
	}
	return err
}

// assumingStatusWriter does for status writes what assumingClient does for the rest.
type assumingStatusWriter struct {
	client.SubResourceWriter
	wrote func(client.Object, error) error
}

func (w assumingStatusWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return w.wrote(obj, w.SubResourceWriter.Update(ctx, obj, opts...))
}

func (w assumingStatusWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return w.wrote(obj, w.SubResourceWriter.Patch(ctx, obj, patch, opts...))
}
