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
//
// A create+bind scenario starts the binder, then the timer, then submits the work: the
// binder binds while the pods are created, so the API server's create rate bounds it.
// A bind-only scenario (bindOnly) submits all the work first, waits until the watch has
// seen every pod and none bound, then starts the timer and the binder: what is timed
// is the binder's own start (informer sync included) and its binding.
type benchScenario struct {
	row      string // the table's binder column
	sub      string // subtest name; its namespace and node prefix derive from it
	gang     func(*corev1.Pod) string
	gangs    bool
	bindOnly bool
	setup    func(b *benchRun)               // what the binder needs before anything is timed (queues); nil: nothing
	start    func(b *benchRun) (stop func()) // the binder: ready to bind (create+bind), or bound (raw bind-only)
	submit   func(b *benchRun)               // all the work, as fast as the API server takes it
}

// noStop is the stop of a binder that has nothing left running.
func noStop() {}

// benchScenarios are the four create+bind measurements of issue 13's table, in table
// order: raw first, kube-scheduler second (the ratios' bases).
func benchScenarios(shape benchShape, gantry string) []benchScenario {
	noGang := func(*corev1.Pod) string { return "" }
	return []benchScenario{
		{row: fmt.Sprintf("raw: create + POST Binding, %d workers, QPS %d", benchWorkers, benchClientQPS), sub: "raw",
			gang: noGang, start: func(*benchRun) func() { return noStop }, submit: (*benchRun).createAndBind},
		{row: fmt.Sprintf("kube-scheduler %s, QPS %d", kubeenv.KubeVersion, benchBinderQPS), sub: "kube-scheduler",
			gang: noGang, start: (*benchRun).startKubeScheduler, submit: func(b *benchRun) { b.createPods(corev1.DefaultSchedulerName, false) }},
		{row: fmt.Sprintf("Gantry, plain-pod gangs of %d, QPS %d", benchGang, benchBinderQPS), sub: "gantry-pods",
			gang: gantryGang, gangs: true, setup: (*benchRun).setupQueues,
			start: gantryBinder(gantry), submit: func(b *benchRun) { b.createPods(SchedulerName, true) }},
		{row: fmt.Sprintf("Gantry, %d Jobs x %d through LocalQueue/ClusterQueue, QPS %d", shape.pods/benchGang, benchGang, benchBinderQPS),
			sub: "gantry-jobs", gang: func(p *corev1.Pod) string { return p.Labels[batchv1.JobNameLabel] }, gangs: true,
			setup: (*benchRun).setupQueues, start: gantryBinder(gantry), submit: (*benchRun).createJobs},
	}
}

// benchBindOnlyScenarios are the bind-only measurements, in the same order: every pod
// exists before the binder starts. Jobs have none: their pods are created only after
// Gantry admits the Job, so binding them cannot be separated from admitting them.
func benchBindOnlyScenarios(gantry string) []benchScenario {
	noGang := func(*corev1.Pod) string { return "" }
	return []benchScenario{
		{row: fmt.Sprintf("raw: POST Binding only, %d workers, QPS %d", benchWorkers, benchClientQPS), sub: "raw-bind", bindOnly: true,
			gang: noGang, start: (*benchRun).bindAll, submit: func(b *benchRun) { b.createPods(benchNobody, false) }},
		{row: fmt.Sprintf("kube-scheduler %s, QPS %d", kubeenv.KubeVersion, benchBinderQPS), sub: "kube-scheduler-bind", bindOnly: true,
			gang: noGang, start: (*benchRun).startKubeScheduler, submit: func(b *benchRun) { b.createPods(corev1.DefaultSchedulerName, false) }},
		{row: fmt.Sprintf("Gantry, plain-pod gangs of %d, QPS %d", benchGang, benchBinderQPS), sub: "gantry-pods-bind", bindOnly: true,
			gang: gantryGang, gangs: true, setup: (*benchRun).setupQueues,
			start: gantryBinder(gantry), submit: func(b *benchRun) { b.createPods(SchedulerName, true) }},
	}
}

// gantryGang is a plain pod's gang: Gantry's gang annotation.
func gantryGang(p *corev1.Pod) string { return p.Annotations[AnnotationGang] }

// benchNobody is the scheduler name of the raw binder's pods: no scheduler may race it.
const benchNobody = "bench-nobody"

// createAndBind is the API server's ceiling for a binder: each worker creates a pod
// and POSTs its Binding right away, pod i to node i mod N (at most pods/N per node,
// so no node gets more than its GPUs).
func (b *benchRun) createAndBind() {
	ns := b.f.ns
	runParallel(b.f.t, benchWorkers, b.shape.pods, func(i int) error {
		p := k8s.MakePod(ns, benchPodName(i)).GPUs("1").Obj()
		p.UID, p.CreationTimestamp = "", metav1.Time{}
		p.Spec.SchedulerName = benchNobody
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

// bindAll is the raw binder of the bind-only table: the pods createPods made exist, and
// each of benchWorkers workers only POSTs Bindings, pod i to node i mod N as in
// createAndBind. It returns once every Binding is accepted.
func (b *benchRun) bindAll() func() {
	ns := b.f.ns
	runParallel(b.f.t, benchWorkers, b.shape.pods, func(i int) error {
		name := benchPodName(i)
		binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Target: corev1.ObjectReference{Kind: "Node", Name: b.nodes[i%len(b.nodes)]}}
		if err := b.cs.CoreV1().Pods(ns).Bind(b.f.ctx, binding, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("bind pod %s: %w", name, err)
		}
		return nil
	})
	return noStop
}

// benchPodName is the name of the scenario's pod i.
func benchPodName(i int) string { return fmt.Sprintf("p%05d", i) }

// createPods submits the scenario's pods for scheduler; with gangs, pods 8g..8g+7 are
// gang g in Gantry's annotations, queued to the LocalQueue setupQueues made.
func (b *benchRun) createPods(scheduler string, gangs bool) { b.createPodsWith(scheduler, gangs, nil) }

// createPodsWith is createPods with edit, when not nil, applied to each pod before
// its create.
func (b *benchRun) createPodsWith(scheduler string, gangs bool, edit func(*corev1.Pod)) {
	ns := b.f.ns
	runParallel(b.f.t, benchWorkers, b.shape.pods, func(i int) error {
		w := k8s.MakePod(ns, benchPodName(i)).GPUs("1")
		if gangs {
			gang := fmt.Sprintf("g%05d", i/benchGang)
			w = w.Queue("lq").Gang(gang, strconv.Itoa(benchGang))
			b.gangs.mark(gang, time.Now())
		}
		p := w.Obj()
		p.UID, p.CreationTimestamp = "", metav1.Time{}
		p.Spec.SchedulerName = scheduler
		if edit != nil {
			edit(p)
		}
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

// setupQueues makes one ClusterQueue with quota for every GPU and a LocalQueue "lq".
func (b *benchRun) setupQueues() {
	b.f.create(k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("bench-cq").Quota("h100", "nvidia.com/gpu", strconv.Itoa(benchNodeGPUs*b.shape.nodes)).Obj(),
		k8s.MakeLocalQueue("", "lq", "bench-cq").Obj())
}

// gantryBinder runs bin, `gantry controller` with its default policy and 200 ms
// interval, as a process of its own as kube-scheduler is, with the same client limits
// and identity (system:masters, so API priority and fairness queues neither). It
// returns once the controller's informers have synced (its /readyz). In the test
// process the controller shared two cores and one heap with the bench's 32 creating
// workers and pod clock, and the API server dropped their watches for falling behind.
func gantryBinder(bin string) func(b *benchRun) func() {
	return func(b *benchRun) func() {
		addr := freeAddr(b.f.t)
		qps := strconv.Itoa(benchBinderQPS)
		p := startGantry(b.f.t, bin, "--kube-api-qps="+qps, "--kube-api-burst="+qps, "--health-probe-bind-address="+addr)
		if err := p.waitReady(addr, 2*time.Minute); err != nil {
			p.kill()
			b.f.t.Fatal(err)
		}
		return p.stop
	}
}

// startGantryInProcess runs Gantry's controller in the test process (`gantry
// controller`'s default policy and interval, the same client limits), so that the
// fleet bench can profile its passes (GANTRY_BENCH_CPUPROFILE) and log them
// (GANTRY_TEST_LOG). It returns once the controller has made its first pass.
func (b *benchRun) startGantryInProcess() func() {
	f := b.f
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
