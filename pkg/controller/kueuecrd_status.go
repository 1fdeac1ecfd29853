package controller

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kueue's controller, which writes its objects' status, does not run where Gantry
// replaces it; Gantry writes the counts `kubectl get clusterqueues` and
// `kubectl get localqueues` show (pending, reserving, admitted) and a ClusterQueue's
// usage per flavor, under the field names v1beta1 and v1beta2 share. A workload Gantry
// admits holds its quota, so it counts as reserving and admitted alike. Other status
// fields (conditions, fair sharing) are left as they are.

// reasonLeftOut is the reason of the Warning event on a Kueue object left out of the
// queue objects (failed conversion, a name a gantry.dev object holds, a reference
// that does not resolve).
const reasonLeftOut = "LeftOut"

// kueueQueueViews are the Kueue ClusterQueues and LocalQueues in use, and the problems
// of Kueue objects not yet recorded as events, under the cache's lock.
func (c *stateCache) kueueQueueViews() (cqs, lqs []*unstructured.Unstructured, events []kueueEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := &c.queues.kueue
	return k.inUse("ClusterQueue"), k.inUse("LocalQueue"), k.unreported()
}

// writeKueueStatuses records each new problem of a Kueue object as a Warning event on
// it, and refreshes the status of the Kueue queues in use where it changed.
func (ctl *Controller) writeKueueStatuses(ctx context.Context, cs *cycleState, cqCounts, lqCounts map[string]queueCounts) {
	cqs, lqs, events := ctl.cache.kueueQueueViews()
	for _, e := range events {
		ctl.events.Eventf(e.obj, "Warning", reasonLeftOut, "%s", e.msg)
	}
	for _, cq := range cqs {
		counts := cqCounts[cq.GetName()]
		st := CQStatus(v1alpha1.ClusterQueueStatus{}, cq.GetName(), cs.quota, counts)
		ctl.patchKueueStatus(ctx, cq, kueueCQStatus(st, counts))
	}
	for _, lq := range lqs {
		ctl.patchKueueStatus(ctx, lq, kueueCounts(lqCounts[lq.GetNamespace()+"/"+lq.GetName()]))
	}
}

// kueueCounts are the count fields of a Kueue queue's status.
func kueueCounts(c queueCounts) map[string]any {
	return map[string]any{"pendingWorkloads": int64(c.pending), "reservingWorkloads": int64(c.reserving), "admittedWorkloads": int64(c.admitted)}
}

// kueueCQStatus is a Kueue ClusterQueue's status fields from Gantry's: the counts and
// the usage per flavor, as both flavorsReservation and flavorsUsage.
func kueueCQStatus(st v1alpha1.ClusterQueueStatus, counts queueCounts) map[string]any {
	out := kueueCounts(counts)
	usage := make([]any, 0, len(st.FlavorsUsage))
	for i := range st.FlavorsUsage {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st.FlavorsUsage[i])
		if err != nil {
			continue
		}
		usage = append(usage, u)
	}
	out["flavorsUsage"], out["flavorsReservation"] = usage, usage
	return out
}

// patchKueueStatus merges want into obj's status when a field differs. A failed write
// is retried by a later pass, as for gantry.dev queues.
func (ctl *Controller) patchKueueStatus(ctx context.Context, obj *unstructured.Unstructured, want map[string]any) {
	cur, _, _ := unstructured.NestedMap(obj.Object, "status")
	if sameFields(cur, want) {
		return
	}
	patch, err := json.Marshal(map[string]any{"status": want})
	if err != nil {
		return
	}
	_ = ctl.c.Status().Patch(ctx, obj.DeepCopy(), client.RawPatch(types.MergePatchType, patch))
}

// sameFields reports whether every field of want has its value in cur (an empty list
// and a missing one are the same).
func sameFields(cur, want map[string]any) bool {
	for k, v := range want {
		c, ok := cur[k]
		if l, isList := v.([]any); isList && len(l) == 0 && !ok {
			continue
		}
		if !ok || !reflect.DeepEqual(normalize(c), normalize(v)) {
			return false
		}
	}
	return true
}

// normalize puts a value through JSON, so numbers and quantities compare as the API
// server stores them.
func normalize(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(data, &out) != nil {
		return v
	}
	return out
}
