package controller

import (
	"context"
	"k8s.io/client-go/util/retry"
	"log/slog"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/kubeenv"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// testEnv is the package's control plane: etcd, kube-apiserver and the Job controller.
var testEnv *kubeenv.Env

func TestMain(m *testing.M) {
	ctrllog.SetLogger(testLogger())
	os.Exit(kubeenv.RunMain(m, kubeenv.Options{ControllerManager: true, CRDDirs: []string{"../../config/crd/bases"}}, &testEnv))
}

// fixture is one integration test's world: a namespace, a direct client, a fake
// kubelet, and a Gantry controller that can be stopped and started again.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	c      client.Client
	ns     string
	stopFn context.CancelFunc
	done   chan struct{}
	reg    *prometheus.Registry // the running controller's metrics
	ctl    *Controller          // the running controller
	// identity acts as the shipped roles' service account (shippedIdentity), made once.
	identity *rest.Config
	// tune adjusts the controller's options before each start (nil: the defaults);
	// manager the process's (metrics serving).
	tune    func(*Options)
	manager func(*ManagerOptions)
}

func newFixture(t *testing.T) *fixture { return newFixtureWith(t, true) }

// newFixtureWith optionally leaves out the fake kubelet (the scale test measures
// binding only, and a kubelet writing 5,000 pod statuses would compete with it).
func newFixtureWith(t *testing.T, kubelet bool) *fixture {
	env := kubeenv.Require(t, testEnv)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ctx: ctx, c: c, ns: strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))}
	if len(f.ns) > 50 {
		f.ns = f.ns[:50]
	}
	f.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}})
	kctx, kcancel := context.WithCancel(ctx)
	if kubelet {
		go fakeKubelet(kctx, c)
	}
	t.Cleanup(func() {
		f.stopController()
		kcancel()
		f.cleanup()
	})
	return f
}

func (f *fixture) create(objs ...client.Object) {
	f.t.Helper()
	for _, o := range objs {
		if o.GetNamespace() == "" && isNamespaced(o) {
			o.SetNamespace(f.ns)
		}
		st := statusOf(o)
		if err := f.c.Create(f.ctx, o); err != nil {
			f.t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
		if st != nil { // nodes: status is a subresource
			st(o)
			if err := f.c.Status().Update(f.ctx, o); err != nil {
				f.t.Fatalf("node status %s: %v", o.GetName(), err)
			}
		}
	}
}

// statusOf returns a function restoring a Node's status after Create dropped it.
func statusOf(o client.Object) func(client.Object) {
	n, ok := o.(*corev1.Node)
	if !ok {
		return nil
	}
	st := *n.Status.DeepCopy()
	return func(o client.Object) { o.(*corev1.Node).Status = st }
}

func isNamespaced(o client.Object) bool {
	switch o.(type) {
	case *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding, *corev1.Node, *corev1.Namespace, *v1alpha1.ClusterQueue, *v1alpha1.ResourceFlavor,
		*v1alpha1.WorkloadPriorityClass, *v1alpha1.Cohort, *v1alpha1.Topology, *resourcev1.DeviceClass:
		return false
	}
	return true
}

// startController runs a fresh Gantry controller (a new process, as far as state goes).
// It acts as a service account holding exactly the shipped roles (config/rbac), so a
// permission the code needs and the roles lack fails in every test, not in a cluster.
func (f *fixture) startController() { f.startControllerAs(f.shippedIdentity()) }

// startControllerAs runs the controller with the given identity.
func (f *fixture) startControllerAs(cfg *rest.Config) {
	f.t.Helper()
	// Resync stays at its 30 s default, longer than any wait in the tests: passes
	// must come from watched changes.
	f.reg = prometheus.NewRegistry()
	opts := Options{Engine: engine.Config{Preemption: true, Grace: time.Second}, Interval: 100 * time.Millisecond, Seed: 1}
	if f.tune != nil {
		f.tune(&opts)
	}
	mo := ManagerOptions{Controller: opts, MetricsAddr: "0", HealthAddr: "0", Log: testLogger(), Registry: f.reg}
	if f.manager != nil {
		f.manager(&mo)
	}
	mgr, ctl, err := NewManager(cfg, mo)
	if err != nil {
		f.t.Fatal(err)
	}
	f.ctl = ctl
	ctx, cancel := context.WithCancel(f.ctx)
	f.stopFn, f.done = cancel, make(chan struct{})
	go func() {
		defer close(f.done)
		if err := mgr.Start(ctx); err != nil {
			f.t.Errorf("manager: %v", err)
		}
	}()
}

// stopController kills the controller and waits until it has stopped.
func (f *fixture) stopController() {
	if f.stopFn != nil {
		f.stopFn()
		<-f.done
		f.stopFn = nil
	}
}

// cleanup removes what the test made so the next test starts from an empty cluster.
func (f *fixture) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bg := client.PropagationPolicy(metav1.DeletePropagationBackground)
	_ = f.c.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(f.ns), bg)
	_ = f.c.DeleteAllOf(ctx, &v1alpha1.Workload{}, client.InNamespace(f.ns))
	_ = f.c.DeleteAllOf(ctx, &v1alpha1.LocalQueue{}, client.InNamespace(f.ns))
	for _, l := range []client.Object{&v1alpha1.ClusterQueue{}, &v1alpha1.ResourceFlavor{}, &v1alpha1.WorkloadPriorityClass{}, &corev1.Node{},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "gantry-controller"}}, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gantry-controller"}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "gantry-metrics-reader"}}, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gantry-metrics-reader"}}} {
		if l.GetName() != "" {
			_ = f.c.Delete(ctx, l)
			continue
		}
		_ = f.c.DeleteAllOf(ctx, l)
	}
	for { // pods go last: force them out, as a kubelet would
		var pods corev1.PodList
		if err := f.c.List(ctx, &pods, client.InNamespace(f.ns)); err != nil || len(pods.Items) == 0 || ctx.Err() != nil {
			break
		}
		for i := range pods.Items {
			forceDelete(ctx, f.c, &pods.Items[i])
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = f.c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}})
}

// fakeKubelet plays every node's kubelet: bound pods start running, and pods being
// deleted are removed at once.
func fakeKubelet(ctx context.Context, c client.Client) {
	for ctx.Err() == nil {
		var pods corev1.PodList
		if err := c.List(ctx, &pods); err == nil {
			for i := range pods.Items {
				p := &pods.Items[i]
				switch {
				case p.DeletionTimestamp != nil:
					forceDelete(ctx, c, p)
				case p.Spec.NodeName != "" && p.Status.Phase == corev1.PodPending:
					p.Status.Phase = corev1.PodRunning
					p.Status.StartTime = ptr.To(metav1.Now())
					_ = c.Status().Update(ctx, p)
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func forceDelete(ctx context.Context, c client.Client, p *corev1.Pod) {
	if len(p.Finalizers) > 0 {
		patch := client.MergeFrom(p.DeepCopy())
		p.Finalizers = nil
		_ = c.Patch(ctx, p, patch)
	}
	err := c.Delete(ctx, p, client.GracePeriodSeconds(0))
	_ = client.IgnoreNotFound(err)
}

// eventually polls cond until it holds, failing the test with cond's last message.
func (f *fixture) eventually(timeout time.Duration, what string, cond func() (bool, string)) {
	f.t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		time.Sleep(50 * time.Millisecond)
	}
	f.t.Fatalf("timed out waiting for %s: %s", what, last)
}

func (f *fixture) workload(name string) *v1alpha1.Workload {
	var wl v1alpha1.Workload
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, &wl); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		f.t.Fatal(err)
	}
	return &wl
}

// jobPods lists a Job's live pods, sorted by name.
func (f *fixture) jobPods(job string) []corev1.Pod {
	var pods corev1.PodList
	if err := f.c.List(f.ctx, &pods, client.InNamespace(f.ns), client.MatchingLabels{batchv1.JobNameLabel: job}); err != nil {
		f.t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func boundCount(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			n++
		}
	}
	return n
}

// waitBound waits until the job has want pods, all bound.
func (f *fixture) waitBound(job string, want int) []corev1.Pod {
	f.t.Helper()
	var pods []corev1.Pod
	f.eventually(30*time.Second, job+" pods bound", func() (bool, string) {
		pods = f.jobPods(job)
		msg := describePods(pods)
		if wl := f.workload(WorkloadNameForJob(job)); wl != nil {
			msg += "; workload " + string(wl.Status.State) + " " + wl.Status.Reason + ": " + wl.Status.Message
		}
		return len(pods) == want && boundCount(pods) == want, msg
	})
	return pods
}

func describePods(pods []corev1.Pod) string {
	var b strings.Builder
	for _, p := range pods {
		b.WriteString(p.Name + "@" + p.Spec.NodeName + "[" + p.Annotations[AnnotationDevices] + "] ")
	}
	return b.String()
}

// finishJob marks the job's running pods Succeeded, as their kubelet would.
func (f *fixture) finishJob(job string) {
	for _, p := range f.jobPods(job) {
		f.setPodPhase(p.Name, corev1.PodSucceeded)
	}
}

// setPodPhase writes a pod's phase as its kubelet would. The controller may update the
// same pod at the same moment (annotations, binding), so a write conflict is retried on a
// fresh read instead of failing the test.
func (f *fixture) setPodPhase(name string, phase corev1.PodPhase) {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var p corev1.Pod
		if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, &p); err != nil {
			return err
		}
		p.Status.Phase = phase
		return f.c.Status().Update(f.ctx, &p)
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// assertNoDeviceSharedTwice fails when two live pods on one node hold the same device.
func (f *fixture) assertNoDeviceSharedTwice() {
	f.t.Helper()
	var pods corev1.PodList
	if err := f.c.List(f.ctx, &pods, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	held := map[string]string{}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded {
			continue
		}
		for _, d := range strings.Split(p.Annotations[AnnotationDevices], ",") {
			if d == "" {
				continue
			}
			key := p.Spec.NodeName + "/" + d
			if other, dup := held[key]; dup {
				f.t.Errorf("device %s held by both %s and %s", key, other, p.Name)
			}
			held[key] = p.Name
		}
	}
}

// testLogger logs to stderr when GANTRY_TEST_LOG is set, else nowhere.
func testLogger() logr.Logger {
	if os.Getenv("GANTRY_TEST_LOG") == "" {
		return logr.Discard()
	}
	return logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.Level(-1)}))
}
