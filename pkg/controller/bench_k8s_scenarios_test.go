//go:build k8sscale

package controller

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/internal/testing/kubeenv"
	"github.com/gantry-sched/gantry/pkg/engine"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// benchScenario is one binder measured side by side with the others.
type benchScenario struct {
	row    string // the table's binder column
	sub    string // subtest name; its namespace and node prefix derive from it
	gang   func(*corev1.Pod) string
	gangs  bool
	start  func(b *benchRun) (stop func()) // the binder, ready to bind
	submit func(b *benchRun)               // all the work, as fast as the API server takes it
}

// benchScenarios are the four measurements of issue 13's table, in table order.
func benchScenarios(shape benchShape) []benchScenario {
	noGang := func(*corev1.Pod) string { return "" }
	return []benchScenario{
		{row: fmt.Sprintf("raw: create + POST Binding, %d workers, QPS %d", benchWorkers, benchClientQPS), sub: "raw",
			gang: noGang, start: func(*benchRun) func() { return func() {} }, submit: (*benchRun).createAndBind},
		{row: fmt.Sprintf("kube-scheduler %s, QPS %d", kubeenv.KubeVersion, benchBinderQPS), sub: "kube-scheduler",
			gang: noGang, start: (*benchRun).startKubeScheduler, submit: func(b *benchRun) { b.createPods(corev1.DefaultSchedulerName, false) }},
		{row: fmt.Sprintf("Gantry, plain-pod gangs of %d, QPS %d", benchGang, benchBinderQPS), sub: "gantry-pods",
			gang: func(p *corev1.Pod) string { return p.Annotations[AnnotationGang] }, gangs: true,
			start: (*benchRun).startGantry, submit: func(b *benchRun) { b.createPods(SchedulerName, true) }},
		{row: fmt.Sprintf("Gantry, %d Jobs x %d through LocalQueue/ClusterQueue, QPS %d", shape.pods/benchGang, benchGang, benchBinderQPS),
			sub: "gantry-jobs", gang: func(p *corev1.Pod) string { return p.Labels[batchv1.JobNameLabel] }, gangs: true,
			start: (*benchRun).startGantry, submit: (*benchRun).createJobs},
	}
}

// createAndBind is the API server's ceiling for a binder: each worker creates a pod
// and POSTs its Binding right away, pod i to node i mod N (at most pods/N per node,
// so no node gets more than its GPUs).
func (b *benchRun) createAndBind() {
	ns := b.f.ns
	runParallel(b.f.t, benchWorkers, b.shape.pods, func(i int) error {
		p := k8s.MakePod(ns, fmt.Sprintf("p%05d", i)).GPUs("1").Obj()
		p.UID, p.CreationTimestamp = "", metav1.Time{}
		p.Spec.SchedulerName = "bench-nobody" // no scheduler may race the raw binder
		created, err := b.cs.CoreV1().Pods(ns).Create(b.f.ctx, p, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create pod %s: %w", p.Name, err)
		}
		binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: ns, UID: created.UID},
			Target: corev1.ObjectReference{Kind: "Node", Name: b.nodes[i%len(b.nodes)]}}
		if err := b.cs.CoreV1().Pods(ns).Bind(b.f.ctx, binding, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("bind pod %s: %w", p.Name, err)
		}
		return nil
	})
}

// createPods submits the scenario's pods for scheduler; with gangs, pods 8g..8g+7 are
// gang g in Gantry's annotations, queued to the LocalQueue startGantry made.
func (b *benchRun) createPods(scheduler string, gangs bool) {
	ns := b.f.ns
	runParallel(b.f.t, benchWorkers, b.shape.pods, func(i int) error {
		w := k8s.MakePod(ns, fmt.Sprintf("p%05d", i)).GPUs("1")
		if gangs {
			gang := fmt.Sprintf("g%05d", i/benchGang)
			w = w.Queue("lq").Gang(gang, strconv.Itoa(benchGang))
			b.gangs.mark(gang, time.Now())
		}
		p := w.Obj()
		p.UID, p.CreationTimestamp = "", metav1.Time{}
		p.Spec.SchedulerName = scheduler
		if _, err := b.cs.CoreV1().Pods(ns).Create(b.f.ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create pod %s: %w", p.Name, err)
		}
		return nil
	})
}

// createJobs submits pods/8 suspended Jobs of 8 one-GPU pods to the LocalQueue; the
// Job controller creates their pods once Gantry admits them.
func (b *benchRun) createJobs() {
	ns := b.f.ns
	runParallel(b.f.t, benchWorkers, b.shape.pods/benchGang, func(i int) error {
		name := fmt.Sprintf("j%05d", i)
		b.gangs.mark(name, time.Now())
		if _, err := b.cs.BatchV1().Jobs(ns).Create(b.f.ctx, k8s.MakeJob(ns, name).Queue("lq").Pods(benchGang).GPUs("1").Obj(),
			metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create Job %s: %w", name, err)
		}
		return nil
	})
}

// startKubeScheduler runs kube-scheduler of the same release with client QPS and burst
// benchBinderQPS, and returns once it is ready.
func (b *benchRun) startKubeScheduler() func() {
	if err := testEnv.StartScheduler(kubeenv.SchedulerOptions{QPS: benchBinderQPS, Burst: benchBinderQPS}); err != nil {
		b.f.t.Fatal(err)
	}
	return func() {
		if err := testEnv.StopProgram("kube-scheduler"); err != nil {
			b.f.t.Error(err)
		}
	}
}

// startGantry makes one ClusterQueue with quota for every GPU and a LocalQueue, and
// runs Gantry's controller (in process, with `gantry controller`'s default policy and
// interval) with the same client limits as kube-scheduler and the same identity
// (system:masters, so neither is queued by API priority and fairness). It returns once
// the controller has made its first pass.
func (b *benchRun) startGantry() func() {
	f := b.f
	f.create(k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("bench-cq").Quota("h100", "nvidia.com/gpu", strconv.Itoa(benchNodeGPUs*b.shape.nodes)).Obj(),
		k8s.MakeLocalQueue("", "lq", "bench-cq").Obj())
	def := engine.DefaultPolicy()
	f.tune = func(o *Options) {
		o.Engine, o.Seed, o.Interval = def.Config, def.Seed, 200*time.Millisecond
	}
	cfg := rest.CopyConfig(testEnv.Config)
	cfg.QPS, cfg.Burst = benchBinderQPS, benchBinderQPS
	f.startControllerAs(cfg)
	f.eventually(2*time.Minute, "Gantry's first pass", func() (bool, string) { return f.passCount() > 0, "no pass yet" })
	return f.stopController
}
