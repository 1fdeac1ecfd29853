package controller

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/devices"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// UnhealthyGPUs reads the GPU indices named by a node's unhealthy-devices annotation,
// sorted. A MIG instance or replica ID marks its whole GPU: its health is the GPU's. An
// ID that is not a Gantry device ID is an error naming it.
func UnhealthyGPUs(node *corev1.Node) ([]int, error) {
	v := strings.TrimSpace(node.Annotations[devices.AnnotationUnhealthyDevices])
	if v == "" {
		return nil, nil
	}
	seen := map[int]bool{}
	for _, id := range strings.Split(v, ",") {
		i, err := devices.GPUOfID(strings.TrimSpace(id))
		if err != nil {
			return nil, fmt.Errorf("node %s: metadata.annotations[%s]: %q is not a device ID (want GPU-<index>[/...])",
				node.Name, devices.AnnotationUnhealthyDevices, id)
		}
		seen[i] = true
	}
	out := make([]int, 0, len(seen))
	for i := range seen {
		out = append(out, i)
	}
	sort.Ints(out)
	return out, nil
}

// markUnhealthy takes the node's unhealthy GPUs out of its model, so nothing new lands
// there; it returns the indices it marked.
func markUnhealthy(node *corev1.Node, nd *devices.NodeDevices) ([]int, error) {
	idx, err := UnhealthyGPUs(node)
	if err != nil || nd == nil {
		return nil, err
	}
	var marked []int
	for _, i := range idx {
		if err := nd.SetHealthy(i, false); err != nil {
			return marked, fmt.Errorf("node %s: metadata.annotations[%s]: %w", node.Name, devices.AnnotationUnhealthyDevices, err)
		}
		marked = append(marked, i)
	}
	return marked, nil
}

// onUnhealthy reports whether an admitted workload holds a device on an unhealthy GPU,
// and which one.
func onUnhealthy(wl *v1alpha1.Workload, unhealthy map[string]map[int]bool) (string, bool) {
	if wl.Status.Admission == nil {
		return "", false
	}
	for _, p := range wl.Status.Admission.Placements {
		for _, id := range p.Devices {
			i, err := devices.GPUOfID(id)
			if err == nil && unhealthy[p.Node][i] {
				return p.Node + "/" + id, true
			}
		}
	}
	return "", false
}

// evictUnhealthy requeues, whole and at once, every gang running on a device the node
// agent reported unhealthy: a gang with a broken member cannot make progress.
func (ctl *Controller) evictUnhealthy(ctx context.Context, w *world, now time.Time) {
	if len(w.unhealthy) == 0 {
		return
	}
	for _, wl := range ptrs(w.workloads) {
		dev, bad := onUnhealthy(wl, w.unhealthy)
		if !bad || meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadFinished) {
			continue
		}
		why := "device " + dev + " is unhealthy"
		if err := ctl.evict(ctx, wl, w.podsOf(wl), ReasonDeviceUnhealthy, why, now); err != nil {
			ctl.retry = true
			ctl.log.Info("eviction not finished, retrying", "workload", wlKey(wl), "reason", err.Error())
		}
	}
}
