package controller_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/cli"
	"github.com/gantry-sched/gantry/internal/testing/kubeenv"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/controller"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// parityQuiet: when nothing the controller reads or writes (Workloads, Jobs, pods)
	// changed for this long, and every decision the instant needs is written, the
	// controller is done with the instant.
	parityQuiet = time.Second
	// paritySettle bounds the wait for an instant to settle.
	paritySettle = 20 * time.Second
	// parityClockClass is a PriorityClass the test touches to wake the controller after
	// moving its clock (any PriorityClass change wakes a pass); nothing refers to it.
	parityClockClass = "parity-clock"
)

var pyTorchJobGVK = schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"}

// Labels the Kubeflow training operator puts on a PyTorchJob's pods.
const (
	labelKubeflowJob     = "training.kubeflow.org/job-name"
	labelKubeflowRole    = "training.kubeflow.org/replica-type"
	labelKubeflowIndex   = "training.kubeflow.org/replica-index"
	labelKubeflowOperate = "training.kubeflow.org/operator-name"
)

// clusterScoped are the kinds of the scenarios that live outside namespaces.
var clusterScoped = map[string]bool{
	"Namespace": true, "Node": true, "ResourceFlavor": true, "ClusterQueue": true, "Cohort": true,
	"WorkloadPriorityClass": true, "Topology": true, "PriorityClass": true,
}

// jobKinds are the kinds the test creates at their simulated submit time.
var jobKinds = map[string]bool{"Job": true, "PyTorchJob": true}

// parityCluster is one scenario on the test control plane: its objects as `gantry
// convert` wrote them, a Gantry controller on an injected clock, the fake kubelet, and
// the operators the test plays (the Job controller is the real one).
type parityCluster struct {
	t     *testing.T
	ctx   context.Context
	env   *kubeenv.Env
	c     client.WithWatch
	clock atomic.Int64 // the controller's clock is sim.Epoch() plus this many nanoseconds

	namespaces map[string]*unstructured.Unstructured // the scenario's namespaces (nil: not in its manifests)
	objects    []*unstructured.Unstructured          // queue objects and nodes
	jobs       map[string]*unstructured.Unstructured // job objects by "namespace/name"
	pyTorch    bool                                  // the scenario has PyTorchJobs (their CRD is installed)
	ticks      int

	admissions admissionWatch
	metrics    *prometheus.Registry // the running controller's
	stopCtl    context.CancelFunc
	ctlDone    chan struct{}
}

// newParityCluster converts every file of dir with `gantry convert -f FILE` (in-process)
// and reads the converted objects; nothing is created yet. Cleanup removes what the
// scenario created.
func newParityCluster(t *testing.T, env *kubeenv.Env, dir string) *parityCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	scheme, err := controller.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	h := &parityCluster{t: t, ctx: ctx, env: env, c: c, namespaces: map[string]*unstructured.Unstructured{},
		jobs: map[string]*unstructured.Unstructured{}}
	h.admissions.admitted = map[string]bool{}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("scenario %s: no manifests (%v)", dir, err)
	}
	for _, f := range files {
		var out, errb bytes.Buffer
		if code := cli.Main([]string{"convert", "-f", f}, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("gantry convert -f %s: exit %d: %s", f, code, errb.String())
		}
		objs, err := decodeObjects(out.Bytes())
		if err != nil {
			t.Fatalf("gantry convert -f %s: output: %v", f, err)
		}
		for _, o := range objs {
			h.add(o)
		}
	}
	t.Cleanup(h.cleanup)
	return h
}

// decodeObjects reads a YAML stream, expanding Lists (`kubectl get -o yaml` output).
func decodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() != "List" {
			out = append(out, u)
			continue
		}
		items, _, _ := unstructured.NestedSlice(m, "items")
		for _, it := range items {
			if im, ok := it.(map[string]any); ok {
				out = append(out, &unstructured.Unstructured{Object: im})
			}
		}
	}
}

// add files one converted object: namespaces, jobs (created at their submit time) and
// the rest (created before the controller starts).
func (h *parityCluster) add(u *unstructured.Unstructured) {
	kind := u.GetKind()
	if !clusterScoped[kind] && u.GetNamespace() == "" {
		u.SetNamespace("default")
	}
	if ns := u.GetNamespace(); ns != "" {
		if _, ok := h.namespaces[ns]; !ok {
			h.namespaces[ns] = nil
		}
	}
	switch {
	case kind == "Namespace":
		h.namespaces[u.GetName()] = u
	case jobKinds[kind]:
		h.jobs[u.GetNamespace()+"/"+u.GetName()] = u
		if kind == pyTorchJobGVK.Kind {
			h.pyTorch = true
		}
	default:
		h.objects = append(h.objects, u)
	}
}

// now is the controller's clock.
func (h *parityCluster) now() time.Time { return sim.Epoch().Add(time.Duration(h.clock.Load())) }

// setClock moves the controller's clock to the simulated instant at.
func (h *parityCluster) setClock(at time.Duration) { h.clock.Store(int64(at)) }

// applyCluster creates the namespaces (a namespace the manifests do not define exists
// on a real cluster already: it is created bare), the CRDs of job kinds the test
// plays the operator of, the queue objects and the nodes (with their status, which
// holds the capacity).
func (h *parityCluster) applyCluster() {
	h.t.Helper()
	for _, name := range sortedKeys(h.namespaces) {
		ns := h.namespaces[name]
		if ns == nil {
			ns = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
				"metadata": map[string]any{"name": name}}}
		}
		h.create(ns.DeepCopy())
	}
	if h.pyTorch {
		if err := h.env.CreateCRDs(h.ctx, controller.ParityMinimalCRD(pyTorchJobGVK.Group, pyTorchJobGVK.Version, pyTorchJobGVK.Kind)); err != nil {
			h.t.Fatal(err)
		}
	}
	for _, o := range h.objects {
		h.create(o.DeepCopy())
	}
}

// create creates one object; a Node's status is written after it (a subresource).
func (h *parityCluster) create(u *unstructured.Unstructured) {
	h.t.Helper()
	status, hasStatus := u.Object["status"]
	if err := h.c.Create(h.ctx, u); err != nil {
		h.t.Fatalf("create %s %s: %v", u.GetKind(), objKey(u), err)
	}
	if u.GetKind() == "Node" && hasStatus {
		u.Object["status"] = status
		if err := h.c.Status().Update(h.ctx, u); err != nil {
			h.t.Fatalf("node %s status: %v", u.GetName(), err)
		}
	}
}

// createJobs creates the named job objects (submitted at this instant).
func (h *parityCluster) createJobs(keys []string) {
	h.t.Helper()
	for _, k := range keys {
		u, ok := h.jobs[k]
		if !ok {
			h.t.Errorf("the simulator submitted %s, which no manifest defines as a Job or PyTorchJob", k)
			continue
		}
		h.create(u.DeepCopy())
	}
}

// startController runs `gantry controller` in-process (the manager the command builds)
// with the policy the simulator runs, on the injected clock.
func (h *parityCluster) startController(pol engine.Policy) {
	h.t.Helper()
	h.metrics = prometheus.NewRegistry()
	mgr, _, err := controller.NewManager(h.env.Config, controller.ManagerOptions{
		Controller:  controller.Options{Engine: pol.Config, Seed: pol.Seed, Interval: 100 * time.Millisecond, Now: h.now},
		MetricsAddr: "0", HealthAddr: "0", Log: controller.ParityLogger(), Registry: h.metrics,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	h.stopCtl, h.ctlDone = cancel, make(chan struct{})
	go func() {
		defer close(h.ctlDone)
		if err := mgr.Start(ctx); err != nil {
			h.t.Errorf("controller manager: %v", err)
		}
	}()
}

func (h *parityCluster) stopController() {
	if h.stopCtl != nil {
		h.stopCtl()
		<-h.ctlDone
		h.stopCtl = nil
	}
}

// passes counts the controller's finished passes (gantry_cycle_duration_seconds is
// observed once per pass); ok is false when the metric is not there to read.
func (h *parityCluster) passes() (n uint64, ok bool) {
	if h.metrics == nil {
		return 0, false
	}
	mfs, err := h.metrics.Gather()
	if err != nil {
		return 0, false
	}
	for _, mf := range mfs {
		if mf.GetName() == "gantry_cycle_duration_seconds" && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetHistogram().GetSampleCount(), true
		}
	}
	return 0, false
}

// tick wakes the controller after its clock moved (a preemption deadline may have
// passed with nothing else changing).
func (h *parityCluster) tick() {
	h.t.Helper()
	h.ticks++
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: parityClockClass,
		Annotations: map[string]string{"parity.gantry.dev/tick": strconv.Itoa(h.ticks)}}}
	err := h.c.Create(h.ctx, pc)
	if apierrors.IsAlreadyExists(err) {
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(pc), pc); err != nil {
				return err
			}
			pc.Annotations = map[string]string{"parity.gantry.dev/tick": strconv.Itoa(h.ticks)}
			return h.c.Update(h.ctx, pc)
		})
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

// startKubelet plays every node's kubelet until the scenario ends.
func (h *parityCluster) startKubelet() {
	ctx, cancel := context.WithCancel(h.ctx)
	h.t.Cleanup(cancel)
	go controller.ParityFakeKubelet(ctx, h.c)
}

// finish ends the named jobs as their pods would: every live pod succeeds (the Job
// controller then completes the Job); a PyTorchJob's operator is played, its
// Succeeded condition set.
func (h *parityCluster) finish(keys []string) {
	h.t.Helper()
	for _, k := range keys {
		u, ok := h.jobs[k]
		if !ok {
			continue
		}
		label := batchv1.JobNameLabel
		if u.GetKind() == pyTorchJobGVK.Kind {
			label = labelKubeflowJob
		}
		for _, p := range h.podsOf(u.GetNamespace(), label, u.GetName()) {
			h.setPodPhase(&p, corev1.PodSucceeded)
		}
		if u.GetKind() == pyTorchJobGVK.Kind {
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur := &unstructured.Unstructured{}
				cur.SetGroupVersionKind(pyTorchJobGVK)
				if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(u), cur); err != nil {
					return err
				}
				_ = unstructured.SetNestedSlice(cur.Object, []any{map[string]any{"type": "Succeeded", "status": "True"}}, "status", "conditions")
				return h.c.Update(h.ctx, cur)
			})
			if err != nil {
				h.t.Fatal(err)
			}
		}
	}
}

func (h *parityCluster) setPodPhase(p *corev1.Pod, phase corev1.PodPhase) {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var cur corev1.Pod
		if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(p), &cur); err != nil {
			return err
		}
		cur.Status.Phase = phase
		return h.c.Status().Update(h.ctx, &cur)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		h.t.Fatal(err)
	}
}

// podsOf lists the live pods carrying label=value in a namespace.
func (h *parityCluster) podsOf(ns, label, value string) []corev1.Pod {
	var pods corev1.PodList
	if err := h.c.List(h.ctx, &pods, client.InNamespace(ns), client.MatchingLabels{label: value}); err != nil {
		h.t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range pods.Items {
		if live(&p) {
			out = append(out, p)
		}
	}
	return out
}

func live(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// playPyTorchOperator does what the Kubeflow training operator does with the
// scenario's PyTorchJobs: a running (unsuspended) job gets one pod per replica, a
// suspended one loses its pods.
func (h *parityCluster) playPyTorchOperator(jobs []unstructured.Unstructured) {
	for i := range jobs {
		u := &jobs[i]
		suspended, _, _ := unstructured.NestedBool(u.Object, "spec", "runPolicy", "suspend")
		pods := h.podsOf(u.GetNamespace(), labelKubeflowJob, u.GetName())
		switch {
		case suspended:
			for j := range pods {
				_ = h.c.Delete(h.ctx, &pods[j])
			}
		case len(pods) == 0:
			for _, p := range pyTorchPods(u) {
				if err := h.c.Create(h.ctx, p); err != nil && !apierrors.IsAlreadyExists(err) {
					h.t.Errorf("play the PyTorchJob operator: create pod %s: %v", p.Name, err)
				}
			}
		}
	}
}

// pyTorchPods are the pods the training operator makes for a PyTorchJob: for every
// replica type, replicas pods "<job>-<type>-<i>" from its template.
func pyTorchPods(u *unstructured.Unstructured) []*corev1.Pod {
	specs, _, _ := unstructured.NestedMap(u.Object, "spec", "pytorchReplicaSpecs")
	var out []*corev1.Pod
	for _, role := range sortedKeys(specs) {
		rs, _ := specs[role].(map[string]any)
		replicas, found, _ := unstructured.NestedInt64(rs, "replicas")
		if !found {
			replicas = 1
		}
		tm, _, _ := unstructured.NestedMap(rs, "template")
		var tmpl corev1.PodTemplateSpec
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tm, &tmpl); err != nil {
			continue
		}
		restart, _, _ := unstructured.NestedString(rs, "restartPolicy")
		lower := strings.ToLower(role)
		for i := int64(0); i < replicas; i++ {
			p := &corev1.Pod{ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: *tmpl.Spec.DeepCopy()}
			p.Name, p.Namespace = fmt.Sprintf("%s-%s-%d", u.GetName(), lower, i), u.GetNamespace()
			if p.Labels == nil {
				p.Labels = map[string]string{}
			}
			p.Labels[labelKubeflowJob], p.Labels[labelKubeflowRole] = u.GetName(), lower
			p.Labels[labelKubeflowIndex], p.Labels[labelKubeflowOperate] = strconv.FormatInt(i, 10), "pytorchjob-controller"
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: pyTorchJobGVK.GroupVersion().String(), Kind: pyTorchJobGVK.Kind,
				Name: u.GetName(), UID: u.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
			if restart == "OnFailure" || restart == "Never" || restart == "Always" {
				p.Spec.RestartPolicy = corev1.RestartPolicy(restart)
			}
			out = append(out, p)
		}
	}
	return out
}

// clusterState is one read of what the scenario's controller works on.
type clusterState struct {
	workloads []v1alpha1.Workload
	jobs      []batchv1.Job
	pyTorch   []unstructured.Unstructured
	pods      []corev1.Pod
}

// read lists the scenario's Workloads, jobs and pods.
func (h *parityCluster) read() (clusterState, error) {
	var st clusterState
	var wls v1alpha1.WorkloadList
	var jobs batchv1.JobList
	var pods corev1.PodList
	for _, l := range []client.ObjectList{&wls, &jobs, &pods} {
		if err := h.c.List(h.ctx, l); err != nil {
			return st, err
		}
	}
	for _, w := range wls.Items {
		if h.mine(w.Namespace) {
			st.workloads = append(st.workloads, w)
		}
	}
	for _, j := range jobs.Items {
		if h.mine(j.Namespace) {
			st.jobs = append(st.jobs, j)
		}
	}
	for _, p := range pods.Items {
		if h.mine(p.Namespace) {
			st.pods = append(st.pods, p)
		}
	}
	if h.pyTorch {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(pyTorchJobGVK.GroupVersion().WithKind(pyTorchJobGVK.Kind + "List"))
		if err := h.c.List(h.ctx, l); err != nil {
			return st, err
		}
		for _, u := range l.Items {
			if h.mine(u.GetNamespace()) {
				st.pyTorch = append(st.pyTorch, u)
			}
		}
	}
	return st, nil
}

func (h *parityCluster) mine(ns string) bool {
	_, ok := h.namespaces[ns]
	return ok
}

// fingerprint changes whenever any object of the state changes.
func (st clusterState) fingerprint() string {
	var parts []string
	for _, w := range st.workloads {
		parts = append(parts, "wl/"+w.Namespace+"/"+w.Name+"@"+w.ResourceVersion)
	}
	for _, j := range st.jobs {
		parts = append(parts, "job/"+j.Namespace+"/"+j.Name+"@"+j.ResourceVersion)
	}
	for _, u := range st.pyTorch {
		parts = append(parts, "pytorchjob/"+u.GetNamespace()+"/"+u.GetName()+"@"+u.GetResourceVersion())
	}
	for _, p := range st.pods {
		parts = append(parts, "pod/"+p.Namespace+"/"+p.Name+"@"+p.ResourceVersion)
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// unsettled says what the instant still waits for ("" when nothing): a decision
// (status) on every submitted job's Workload, and every pod of every admitted gang
// bound.
func (st clusterState) unsettled(submitted []string) string {
	byJob := map[string]*v1alpha1.Workload{}
	for i := range st.workloads {
		byJob[jobKey(&st.workloads[i])] = &st.workloads[i]
	}
	for _, k := range submitted {
		wl := byJob[k]
		switch {
		case wl == nil:
			return k + " has no Workload yet"
		case wl.Status.State == "":
			return k + "'s Workload has no decision yet"
		}
	}
	for _, wl := range byJob {
		if wl.Status.Admission == nil || finished(wl) || wl.Annotations[controller.AnnotationPreemptionNotice] != "" || wl.Spec.Owner == nil {
			continue
		}
		label := batchv1.JobNameLabel
		if wl.Spec.Owner.Kind == pyTorchJobGVK.Kind {
			label = labelKubeflowJob
		}
		want, pods, bound := int32(0), 0, 0
		for _, ps := range wl.Spec.PodSets {
			want += ps.Count
		}
		for _, p := range st.pods {
			if p.Namespace == wl.Namespace && p.Labels[label] == wl.Spec.Owner.Name && live(&p) {
				pods++
				if p.Spec.NodeName != "" {
					bound++
				}
			}
		}
		if pods != int(want) || bound != int(want) {
			return fmt.Sprintf("%s is admitted: %d pods of %d exist, %d bound", jobKey(wl), pods, want, bound)
		}
	}
	return ""
}

// settle waits until the controller is done with the current instant: more than
// passesBefore passes finished (so one ran on the moved clock: the last instant was
// quiet when passesBefore was read), every decision written, every admitted gang bound,
// and nothing changing for parityQuiet. It plays the PyTorchJob operator meanwhile. It
// returns what it still waited for when paritySettle ran out ("" when it settled).
func (h *parityCluster) settle(submitted []string, passesBefore uint64) string {
	deadline := time.Now().Add(paritySettle)
	var fp, why string
	quietSince := time.Now()
	for {
		st, err := h.read()
		switch {
		case err != nil:
			why = err.Error()
		default:
			h.playPyTorchOperator(st.pyTorch)
			why = st.unsettled(submitted)
			if n, ok := h.passes(); ok && n <= passesBefore && why == "" {
				why = "no pass of the controller since its clock moved"
			}
			if f := st.fingerprint(); f != fp {
				fp, quietSince = f, time.Now()
			}
		}
		if why == "" && time.Since(quietSince) >= parityQuiet {
			return ""
		}
		if time.Now().After(deadline) {
			if why == "" {
				why = "its Workloads, jobs or pods kept changing"
			}
			return why
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// observe reads the controller's decisions at instant at: every submitted job's
// Workload, the admissions made at this instant in the order they were written, their
// flavors and placements from the Workload status, and their bound pods.
func (h *parityCluster) observe(at time.Duration, submitted []string) (decisions, error) {
	d := newDecisions(at)
	st, err := h.read()
	if err != nil {
		return d, err
	}
	byJob := map[string]*v1alpha1.Workload{}
	jobOf := map[string]string{} // Workload "namespace/name" -> its job's
	for i := range st.workloads {
		wl := &st.workloads[i]
		byJob[jobKey(wl)], jobOf[wl.Namespace+"/"+wl.Name] = wl, jobKey(wl)
	}
	for _, k := range submitted {
		if byJob[k] == nil {
			d.workloads[k] = wlView{phase: phaseAbsent}
		}
	}
	for k, wl := range byJob {
		d.workloads[k] = viewOf(wl, jobOf)
	}
	d.admitted = h.admissions.at(at)
	for _, k := range d.admitted {
		wl := byJob[k]
		if wl == nil || wl.Status.Admission == nil {
			continue
		}
		p := placement{pods: map[string]podAt{}}
		var flavors []string
		for _, psa := range wl.Status.Admission.PodSetAssignments {
			for _, f := range psa.Flavors {
				flavors = append(flavors, f)
			}
		}
		p.flavors = nodeSet(flavors)
		for _, pl := range wl.Status.Admission.Placements {
			p.pods[fmt.Sprintf("%s-%d", pl.PodSet, pl.Index)] = podAt{node: pl.Node, devices: deviceSet(pl.Devices)}
		}
		d.placed[k] = p
		bound := map[string]podAt{}
		for _, pod := range st.pods {
			if pod.Namespace != wl.Namespace || pod.Annotations[controller.AnnotationWorkload] != wl.Namespace+"/"+wl.Name ||
				!live(&pod) || pod.Spec.NodeName == "" {
				continue
			}
			var devs []string
			if a := pod.Annotations[controller.AnnotationDevices]; a != "" {
				devs = strings.Split(a, ",")
			}
			bound[pod.Annotations[controller.AnnotationPodSlot]] = podAt{node: pod.Spec.NodeName, devices: deviceSet(devs)}
		}
		d.bound[k] = bound
	}
	return d, nil
}

// viewOf is where a Workload stands, as its status and annotations say.
func viewOf(wl *v1alpha1.Workload, jobOf map[string]string) wlView {
	switch {
	case finished(wl):
		return wlView{phase: phaseFinished}
	case wl.Status.Admission != nil && wl.Annotations[controller.AnnotationPreemptionNotice] != "":
		by := wl.Annotations[controller.AnnotationPreemptedBy]
		if j, ok := jobOf[by]; ok {
			by = j
		}
		return wlView{phase: phaseNoticed, by: by}
	case wl.Status.Admission != nil:
		return wlView{phase: phaseAdmitted}
	case wl.Status.Reason == controller.ReasonReserved:
		v := wlView{phase: phaseReserved}
		if wl.Status.ETA != nil {
			v.eta = wl.Status.ETA.Time.Sub(sim.Epoch())
		}
		if rest, ok := strings.CutPrefix(wl.Status.Message, "capacity reserved on "); ok {
			nodes, _, _ := strings.Cut(rest, ": ")
			v.nodes = nodeSet(strings.Split(nodes, ","))
		}
		return v
	}
	return wlView{phase: phasePending, reason: wl.Status.Reason}
}

func finished(wl *v1alpha1.Workload) bool {
	return meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadFinished)
}

// jobKey names a Workload by its job, "namespace/name", as the simulator names it.
func jobKey(wl *v1alpha1.Workload) string {
	if wl.Spec.Owner != nil && wl.Spec.Owner.Name != "" {
		return wl.Namespace + "/" + wl.Spec.Owner.Name
	}
	return wl.Namespace + "/" + wl.Name
}

// admissionWatch records, from a watch on Workloads (events come in the order the API
// server committed them), every admission: which job, and at what instant of the
// controller's clock (the Admitted condition's time).
type admissionWatch struct {
	mu       sync.Mutex
	admitted map[string]bool // Workload "namespace/name" -> admitted at its last event
	log      []admissionEvent
	ended    bool // events were missed (the watch could not resume)
}

type admissionEvent struct {
	job string
	at  time.Duration
	seq int64 // Admission.Sequence: the decided order (writes of a pass are concurrent)
}

// watchAdmissions starts the watch; call it before the controller starts. Like an
// informer it lists first (from the API server's watch cache) and watches from the
// list's resourceVersion: a watch without one must wait until the cache has caught up
// with etcd, which on this control plane can time out for a kind that did not change
// lately. It resumes after the last event whenever the server ends the stream.
func (h *parityCluster) watchAdmissions() {
	h.t.Helper()
	ctx, cancel := context.WithCancel(h.ctx)
	open := func(rv string) (watch.Interface, string, error) {
		if rv == "" {
			var l v1alpha1.WorkloadList
			if err := h.c.List(ctx, &l, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "0"}}); err != nil {
				return nil, "", err
			}
			for i := range l.Items {
				if h.mine(l.Items[i].Namespace) {
					h.admissions.observe(&l.Items[i], false)
				}
			}
			rv = l.ResourceVersion
		}
		w, err := h.c.Watch(ctx, &v1alpha1.WorkloadList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
		return w, rv, err
	}
	w, rv, err := open("")
	if err != nil {
		h.t.Fatal(err)
	}
	done := make(chan struct{})
	h.t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for {
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					if st, ok := ev.Object.(*metav1.Status); ok && st.Code == 410 {
						h.admissions.lost() // too old to resume: events were missed
						rv = ""
					}
					continue
				}
				o, ok := ev.Object.(client.Object)
				if !ok {
					continue
				}
				rv = o.GetResourceVersion()
				if wl, ok := o.(*v1alpha1.Workload); ok && h.mine(wl.Namespace) && ev.Type != watch.Bookmark {
					h.admissions.observe(wl, ev.Type == watch.Deleted)
				}
			}
			w.Stop()
			for {
				if ctx.Err() != nil {
					return
				}
				var err error
				if w, rv, err = open(rv); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
}

func (a *admissionWatch) lost() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ended = true
}

func (a *admissionWatch) observe(wl *v1alpha1.Workload, deleted bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := wl.Namespace + "/" + wl.Name
	now := !deleted && wl.Status.Admission != nil && !finished(wl)
	if now && !a.admitted[key] {
		ev := admissionEvent{job: jobKey(wl), at: -1, seq: wl.Status.Admission.Sequence}
		if c := meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.WorkloadAdmitted); c != nil {
			ev.at = c.LastTransitionTime.Time.Sub(sim.Epoch())
		}
		a.log = append(a.log, ev)
	}
	a.admitted[key] = now
}

// at lists the jobs admitted at instant at, in the order the controller decided them.
func (a *admissionWatch) at(at time.Duration) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var evs []admissionEvent
	for _, e := range a.log {
		if e.at == at {
			evs = append(evs, e)
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].seq < evs[j].seq })
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.job
	}
	return out
}

// closedEarly reports whether events were missed.
func (a *admissionWatch) closedEarly() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ended
}

// cleanup removes everything the scenario made, so the next test starts from an empty
// cluster: the controller first (it would recreate Workloads), then jobs, Workloads,
// queues, nodes, pods (forced, as a kubelet would) and the namespaces.
func (h *parityCluster) cleanup() {
	h.stopController()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bg := client.PropagationPolicy(metav1.DeletePropagationBackground)
	for ns := range h.namespaces {
		in := client.InNamespace(ns)
		_ = h.c.DeleteAllOf(ctx, &batchv1.Job{}, in, bg)
		if h.pyTorch {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(pyTorchJobGVK)
			_ = h.c.DeleteAllOf(ctx, u, in, bg)
		}
		_ = h.c.DeleteAllOf(ctx, &v1alpha1.Workload{}, in)
	}
	for i := len(h.objects) - 1; i >= 0; i-- {
		_ = h.c.Delete(ctx, h.objects[i].DeepCopy())
	}
	_ = h.c.Delete(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: parityClockClass}})
	for ctx.Err() == nil {
		var pods corev1.PodList
		left := 0
		if err := h.c.List(ctx, &pods); err != nil {
			break
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if !h.mine(p.Namespace) {
				continue
			}
			left++
			if len(p.Finalizers) > 0 {
				patch := client.MergeFrom(p.DeepCopy())
				p.Finalizers = nil
				_ = h.c.Patch(ctx, p, patch)
			}
			_ = h.c.Delete(ctx, p, client.GracePeriodSeconds(0))
		}
		if left == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for ns := range h.namespaces {
		_ = h.c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
}

func objKey(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetName()
	}
	return u.GetNamespace() + "/" + u.GetName()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
