//go:build k8sscale

package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/internal/testing/kubeenv"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// benchWorkers submit work (and, in the raw scenario, bind) in parallel.
	benchWorkers = 32
	// benchClientQPS is the benchmark's own client: never the bottleneck.
	benchClientQPS = 10000
	// benchBinderQPS is the client limit of both schedulers measured.
	benchBinderQPS = 5000
	// benchGang is the gang size of Gantry's scenarios.
	benchGang = 8
	// benchNodeGPUs is every node's GPU count.
	benchNodeGPUs = 8
	// benchScenarioLabel marks a scenario's nodes, so its teardown deletes just them.
	benchScenarioLabel = "bench.gantry.dev/scenario"
)

// benchShape is the control plane every scenario runs on.
type benchShape struct{ nodes, pods int }

// benchRun is one scenario's world: a fixture (namespace, client, Gantry controller),
// a client fast enough never to throttle the work, and the scenario's own nodes.
type benchRun struct {
	f      *fixture
	cs     kubernetes.Interface
	shape  benchShape
	prefix string // of node names, and the value of benchScenarioLabel
	nodes  []string
	gangs  *gangClock
}

// nodeResources is the status patch that gives a node its GPUs.
type nodeResources struct {
	Status struct {
		Capacity    corev1.ResourceList `json:"capacity"`
		Allocatable corev1.ResourceList `json:"allocatable"`
	} `json:"status"`
}

// makeNodes creates the scenario's nodes, eight H100s each and annotated for KWOK, and
// waits until KWOK has made every one Ready with its GPUs allocatable. The status is
// patched (not updated) because KWOK initializes the same status at the same time.
func (b *benchRun) makeNodes() {
	b.nodes = make([]string, b.shape.nodes)
	runParallel(b.f.t, benchWorkers, b.shape.nodes, func(i int) error {
		name := fmt.Sprintf("%s-%05d", b.prefix, i)
		n := k8s.MakeNode(name).H100(benchNodeGPUs).Label(benchScenarioLabel, b.prefix).Obj()
		n.Annotations = map[string]string{kubeenv.KWOKNodeAnnotation: kubeenv.KWOKNodeValue}
		var patch nodeResources
		patch.Status.Capacity, patch.Status.Allocatable = n.Status.Capacity, n.Status.Capacity
		n.Status = corev1.NodeStatus{}
		if _, err := b.cs.CoreV1().Nodes().Create(b.f.ctx, n, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create node %s: %w", name, err)
		}
		data, err := json.Marshal(patch)
		if err != nil {
			return fmt.Errorf("node %s status patch: %w", name, err)
		}
		if _, err := b.cs.CoreV1().Nodes().Patch(b.f.ctx, name, types.StrategicMergePatchType, data, metav1.PatchOptions{}, "status"); err != nil {
			return fmt.Errorf("patch node %s status: %w", name, err)
		}
		b.nodes[i] = name
		return nil
	})
	deadline := time.Now().Add(2*time.Minute + time.Duration(b.shape.nodes)*20*time.Millisecond)
	for {
		ready, alloc, err := b.readyNodes()
		if err == nil && ready == b.shape.nodes {
			return
		}
		if time.Now().After(deadline) {
			b.f.t.Fatalf("%d of %d nodes %s-* Ready with %d GPUs after KWOK's start (%d GPUs allocatable in all): %v",
				ready, b.shape.nodes, b.prefix, benchNodeGPUs, sumValues(alloc), err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// readyNodes counts the scenario's nodes that are Ready with all their GPUs
// allocatable, and returns every node's allocatable GPUs.
func (b *benchRun) readyNodes() (int, map[string]int64, error) {
	list, err := b.cs.CoreV1().Nodes().List(b.f.ctx, metav1.ListOptions{LabelSelector: benchScenarioLabel + "=" + b.prefix})
	if err != nil {
		return 0, nil, fmt.Errorf("list nodes %s-*: %w", b.prefix, err)
	}
	alloc := map[string]int64{}
	ready := 0
	for i := range list.Items {
		n := &list.Items[i]
		q := n.Status.Allocatable["nvidia.com/gpu"]
		alloc[n.Name] = q.Value()
		if nodeReady(n) && q.Value() == benchNodeGPUs {
			ready++
		}
	}
	return ready, alloc, nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func sumValues(m map[string]int64) int64 {
	var s int64
	for _, v := range m {
		s += v
	}
	return s
}

// benchKind is one kind of object teardown removes: how to list their names, how to
// delete one.
type benchKind struct {
	what string
	list func(ctx context.Context) ([]string, error)
	del  func(ctx context.Context, name string) error
}

// teardown leaves an empty cluster for the next scenario: the Jobs, every pod at once
// (grace 0, no kubelet wait), the Workloads and the scenario's nodes, each deleted by
// name on benchWorkers workers (a delete-collection is served one object at a time and
// takes minutes for 10,000 pods). The fixture's own cleanup, which runs after it,
// removes the rest and the namespace.
func (b *benchRun) teardown() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	ns := b.f.ns
	bg := metav1.DeletePropagationBackground
	nodeSel := metav1.ListOptions{LabelSelector: benchScenarioLabel + "=" + b.prefix}
	// Job pods carry the Job controller's tracking finalizer, which would hold them
	// until that controller noticed their Job is gone; the pods' list notes which to
	// strip before the delete (written before the deletes start, read only by them).
	var finalized map[string]bool
	kinds := []benchKind{
		{"Jobs", func(ctx context.Context) ([]string, error) {
			l, err := b.cs.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
			return namesOf(err, func() int { return len(l.Items) }, func(i int) string { return l.Items[i].Name })
		}, func(ctx context.Context, name string) error {
			return b.cs.BatchV1().Jobs(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg})
		}},
		{"pods", func(ctx context.Context) ([]string, error) {
			l, err := b.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			finalized = map[string]bool{}
			if err == nil {
				for i := range l.Items {
					finalized[l.Items[i].Name] = len(l.Items[i].Finalizers) > 0
				}
			}
			return namesOf(err, func() int { return len(l.Items) }, func(i int) string { return l.Items[i].Name })
		}, func(ctx context.Context, name string) error {
			if finalized[name] {
				if _, err := b.cs.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`),
					metav1.PatchOptions{}); err != nil {
					return err
				}
			}
			return b.cs.CoreV1().Pods(ns).Delete(ctx, name, *metav1.NewDeleteOptions(0))
		}},
		{"Workloads", func(ctx context.Context) ([]string, error) {
			var l v1alpha1.WorkloadList
			err := b.f.c.List(ctx, &l, client.InNamespace(ns))
			return namesOf(err, func() int { return len(l.Items) }, func(i int) string { return l.Items[i].Name })
		}, func(ctx context.Context, name string) error {
			return b.f.c.Delete(ctx, &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
		}},
		{"nodes", func(ctx context.Context) ([]string, error) {
			l, err := b.cs.CoreV1().Nodes().List(ctx, nodeSel)
			return namesOf(err, func() int { return len(l.Items) }, func(i int) string { return l.Items[i].Name })
		}, func(ctx context.Context, name string) error {
			return b.cs.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
		}},
	}
	for _, k := range kinds {
		b.empty(ctx, k)
	}
}

// namesOf is the names of a list's n() items, or its error (the list is only
// read when there is none).
func namesOf(err error, n func() int, name func(i int) string) ([]string, error) {
	if err != nil {
		return nil, err
	}
	out := make([]string, n())
	for i := range out {
		out[i] = name(i)
	}
	return out, nil
}

// empty deletes every object of k until a list comes back empty or ctx ends; objects
// already gone count as deleted, other failures are retried on the next round.
func (b *benchRun) empty(ctx context.Context, k benchKind) {
	t := b.f.t
	for ctx.Err() == nil {
		names, err := k.list(ctx)
		if err != nil {
			t.Logf("teardown: list %s: %v", k.what, err)
			time.Sleep(time.Second)
			continue
		}
		if len(names) == 0 {
			return
		}
		var mu sync.Mutex
		var failed []error
		next := make(chan string)
		var wg sync.WaitGroup
		for range benchWorkers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for name := range next {
					if err := k.del(ctx, name); err != nil && !apierrors.IsNotFound(err) {
						mu.Lock()
						failed = append(failed, err)
						mu.Unlock()
					}
				}
			}()
		}
		for _, name := range names {
			next <- name
		}
		close(next)
		wg.Wait()
		if len(failed) > 0 {
			t.Logf("teardown: %d of %d %s not deleted, retrying: %v", len(failed), len(names), k.what, failed[0])
			time.Sleep(time.Second)
		}
	}
	t.Errorf("teardown: %s of scenario %s still there after 15 minutes", k.what, b.prefix)
}

// waitAllBound waits until the clock has seen want pods bound, logging progress.
func (b *benchRun) waitAllBound(clock *podClock, want int, start time.Time) {
	deadline := start.Add(3*time.Minute + time.Duration(want)*50*time.Millisecond)
	next := time.Now().Add(10 * time.Second)
	for {
		n, _ := clock.boundCount()
		if n >= want {
			return
		}
		now := time.Now()
		if now.After(deadline) {
			_, faults := clock.snapshot()
			b.f.t.Fatalf("%d of %d pods bound after %s (faults: %v)", n, want, now.Sub(start).Round(time.Second), faults)
		}
		if now.After(next) {
			b.f.t.Logf("%s: %d of %d pods bound, %d finished", now.Sub(start).Round(time.Second), n, want, clock.finishedCount())
			next = now.Add(10 * time.Second)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitAllSeenUnbound waits, before a bind-only binder starts, until the clock has seen
// all want pods; a pod bound already means something other than the measured binder
// binds in the scenario's namespace, and fails the scenario.
func (b *benchRun) waitAllSeenUnbound(clock *podClock, want int) {
	deadline := time.Now().Add(time.Minute + time.Duration(want)*5*time.Millisecond)
	for {
		seen := clock.seenCount()
		if bound, _ := clock.boundCount(); bound > 0 {
			b.f.t.Fatalf("%d pods bound before the binder started", bound)
		}
		if seen >= want {
			return
		}
		if time.Now().After(deadline) {
			b.f.t.Fatalf("%d of %d created pods seen in the watch", seen, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
