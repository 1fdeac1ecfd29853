package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// slotName is a placement's stable name inside its workload ("main-3").
func slotName(p v1alpha1.PodPlacement) string { return p.PodSet + "-" + strconv.Itoa(int(p.Index)) }

// binding is one pod to bind into one planned slot.
type binding struct {
	pod  *corev1.Pod
	slot v1alpha1.PodPlacement
}

// MatchGang pairs a workload's live pods with its planned slots. Pods already carrying
// a slot annotation keep it (restart safety: a crash between annotating and binding
// resumes with the same slot); bound pods hold their slot. The unbound rest are paired
// with the free slots of their own pod set (podSetOf tells it; "" fits any) in a stable
// order, and only when every free slot has a pod: a gang is bound whole, never in part.
// It returns nil when the gang is incomplete.
func MatchGang(placements []v1alpha1.PodPlacement, pods []*corev1.Pod, podSetOf func(*corev1.Pod) string) []binding {
	slots := map[string]v1alpha1.PodPlacement{}
	for _, p := range placements {
		slots[slotName(p)] = p
	}
	var out []binding
	var loose []*corev1.Pod
	for _, pod := range pods {
		s, ok := slots[pod.Annotations[AnnotationPodSlot]]
		switch {
		case ok && pod.Spec.NodeName != "":
			delete(slots, slotName(s))
		case ok:
			delete(slots, slotName(s))
			out = append(out, binding{pod: pod, slot: s})
		case pod.Spec.NodeName == "":
			loose = append(loose, pod)
		}
	}
	free := make([]v1alpha1.PodPlacement, 0, len(slots))
	for _, s := range slots {
		free = append(free, s)
	}
	sort.Slice(free, func(i, j int) bool {
		if free[i].PodSet != free[j].PodSet {
			return free[i].PodSet < free[j].PodSet
		}
		return free[i].Index < free[j].Index
	})
	sort.SliceStable(loose, func(i, j int) bool { return podOrder(loose[i]) < podOrder(loose[j]) })
	used := make([]bool, len(loose))
	for _, s := range free {
		k := -1
		for i, p := range loose {
			if ps := podSetOf(p); !used[i] && (ps == "" || ps == s.PodSet) {
				k = i
				break
			}
		}
		if k < 0 {
			return nil // wait for the rest of the gang
		}
		used[k] = true
		out = append(out, binding{pod: loose[k], slot: s})
	}
	return out
}

// podOrder sorts pods by completion index when the job has one, else by name.
func podOrder(p *corev1.Pod) string {
	if idx, ok := p.Annotations["batch.kubernetes.io/job-completion-index"]; ok {
		return fmt.Sprintf("%09s", idx)
	}
	return p.Name
}

// bindGang binds every pod of the gang through the Binding subresource, concurrently.
// The Binding carries the pod's devices, slot and Workload as annotations, which the API
// server copies onto the pod in the same write: a pod is never bound without its
// devices (the device plugin reads them) nor annotated without being bound, and one
// request per pod does both. An "already bound" answer counts as done. It returns the
// pods bound.
func bindGang(ctx context.Context, c client.Client, wl *v1alpha1.Workload, bs []binding) (int, error) {
	var bound atomic.Int64
	err := forEach(bs, func(b binding) error {
		target := &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: b.pod.Name, Namespace: b.pod.Namespace, UID: b.pod.UID,
				Annotations: bindingAnnotations(wl, b)},
			Target: corev1.ObjectReference{Kind: "Node", Name: b.slot.Node},
		}
		err := c.SubResource("binding").Create(ctx, b.pod, target)
		if err != nil && !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("bind pod %s/%s to %s: %w", b.pod.Namespace, b.pod.Name, b.slot.Node, err)
		}
		bound.Add(1)
		return nil
	})
	return int(bound.Load()), err
}

// forEach runs fn on every binding concurrently and returns the errors joined.
func forEach(bs []binding, fn func(binding) error) error {
	errs := make([]error, len(bs))
	var wg sync.WaitGroup
	for i := range bs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(bs[i])
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// bindingAnnotations are what a bound pod carries: its devices, its slot in the gang and
// its Workload.
func bindingAnnotations(wl *v1alpha1.Workload, b binding) map[string]string {
	return map[string]string{
		AnnotationDevices:  strings.Join(b.slot.Devices, ","),
		AnnotationPodSlot:  slotName(b.slot),
		AnnotationWorkload: wlKey(wl),
	}
}
