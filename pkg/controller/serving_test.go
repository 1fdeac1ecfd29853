package controller

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/manifest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// servingTemplate is a pod template asking for gpus GPUs, scheduled by Gantry, with the
// given template labels.
func servingTemplate(gpus string, labels map[string]string) corev1.PodTemplateSpec {
	q := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(gpus)}
	l := map[string]string{"app": "srv"}
	for k, v := range labels {
		l[k] = v
	}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
		Spec: corev1.PodSpec{SchedulerName: SchedulerName, Containers: []corev1.Container{{Name: "main", Image: "srv",
			Resources: corev1.ResourceRequirements{Requests: q, Limits: q}}}}}
}

// deploymentObj is a Deployment of replicas pods asking for gpus GPUs each; the queue
// label goes on the object (onObject) or only on its pod template.
func deploymentObj(ns, name string, replicas int32, gpus string, onObject bool) *appsv1.Deployment {
	d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "srv"}},
			Template: servingTemplate(gpus, map[string]string{api.LabelGantryQueueName: "lq"})}}
	if onObject {
		d.Labels = map[string]string{api.LabelKueueQueueName: "lq"}
		delete(d.Spec.Template.Labels, api.LabelGantryQueueName)
	}
	return d
}

// statefulSetObj is a StatefulSet of replicas pods asking for gpus GPUs each, queued.
func statefulSetObj(ns, name string, replicas int32, gpus string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{api.LabelGantryQueueName: "lq"}},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "srv"}},
			PodManagementPolicy: appsv1.ParallelPodManagement, Template: servingTemplate(gpus, nil)}}
}

// lwsObj is a LeaderWorkerSet of replicas groups of size pods; with a leader template
// (a CPU-only leader) when leader is set. Workers ask for gpus GPUs.
func lwsObj(ns, name string, replicas, size int64, gpus string, leader bool) *unstructured.Unstructured {
	tmpl := func(t corev1.PodTemplateSpec) map[string]any {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&t)
		if err != nil {
			panic(err)
		}
		return m
	}
	lwt := map[string]any{"size": size, "workerTemplate": tmpl(servingTemplate(gpus, nil))}
	if leader {
		lwt["leaderTemplate"] = tmpl(servingTemplate("0", nil))
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
		"metadata": map[string]any{"name": name, "namespace": ns, "uid": "uid-" + name,
			"labels": map[string]any{api.LabelGantryQueueName: "lq"}},
		"spec": map[string]any{"replicas": replicas, "leaderWorkerTemplate": lwt},
	}}
}

func toUnstructured(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func servingKindNamed(t *testing.T, kind string) servingKind {
	t.Helper()
	for _, k := range servingKinds() {
		if k.GVK.Kind == kind {
			return k
		}
	}
	t.Fatalf("no serving kind %s", kind)
	return servingKind{}
}

// replicaSetPod is a pod the ReplicaSet "<deployment>-<hash>" made.
func replicaSetPod(ns, deployment, hash, name, gpus string) *corev1.Pod {
	p := k8s.MakePod(ns, name).GPUs(gpus).Label("app", "srv").Label("pod-template-hash", hash).Obj()
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: deployment + "-" + hash,
		UID: types.UID("uid-rs-" + deployment), Controller: ptr.To(true)}}
	return p
}

// TestServingGangOf: each serving pod is matched to its Workload's gang by its owner
// or LeaderWorkerSet labels; other pods are none.
func TestServingGangOf(t *testing.T) {
	owned := func(kind, name string) *corev1.Pod {
		p := k8s.MakePod("ns", "p").Obj()
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, Controller: ptr.To(true)}}
		return p
	}
	lwsPod := k8s.MakePod("ns", "lws-1-2").Label(lwsNameLabel, "lws").Label(lwsGroupIndexLabel, "1").Label(lwsWorkerIndexLabel, "2").Obj()
	lwsPod.OwnerReferences = owned(KindStatefulSet, "lws-1").OwnerReferences // LWS runs a group's workers in a StatefulSet
	notOurs := replicaSetPod("ns", "web", "abc", "web-abc-x", "1")
	notOurs.Spec.SchedulerName = "default-scheduler"
	noHash := owned("ReplicaSet", "web-abc")
	cases := []struct {
		name      string
		pod       *corev1.Pod
		kind, key string
	}{
		{"deployment pod", replicaSetPod("ns", "web", "abc", "web-abc-x", "1"), KindServingPod, "web-abc-x"},
		{"replicaset pod without template hash", noHash, "", ""},
		{"statefulset pod", owned(KindStatefulSet, "db"), KindStatefulSet, "db"},
		{"lws worker", lwsPod, KindLeaderWorkerSet, "lws-1"},
		{"job pod", k8s.MakePod("ns", "j").Label("batch.kubernetes.io/job-name", "j").Obj(), "", ""},
		{"another scheduler's pod", notOurs, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kind, key := gangOf(tc.pod)
			if kind != tc.kind || key != tc.key {
				t.Errorf("gangOf = %q %q, want %q %q", kind, key, tc.kind, tc.key)
			}
			if kind != "" && WorkloadNameForGang(kind, key) != WorkloadNameFor(kind, key) {
				t.Errorf("WorkloadNameForGang(%s, %s) = %s: the gang's Workload name must be its serving Workload's", kind, key, WorkloadNameForGang(kind, key))
			}
		})
	}
}

// TestServingWorkloads: what each serving object should have, by the shared reader:
// names, owners, pod set sizes and the queue (on the object or its template).
func TestServingWorkloads(t *testing.T) {
	pods := []*corev1.Pod{
		replicaSetPod("ns", "web", "abc", "web-abc-1", "2"),
		replicaSetPod("ns", "web", "abc", "web-abc-2", "2"),
		replicaSetPod("ns", "other", "abc", "other-abc-1", "2"),
		k8s.MakePod("ns", "web-abc-3").Phase(corev1.PodSucceeded).Obj(),
	}
	leaving := replicaSetPod("ns", "web", "old", "web-old-1", "1")
	leaving.DeletionTimestamp = ptr.To(metav1.Now())
	pods = append(pods, leaving)
	type want struct {
		name, owner string
		sets        string // "name=count,..."
		create      bool
	}
	cases := []struct {
		name    string
		kind    string
		obj     *unstructured.Unstructured
		want    []want
		wantErr string
	}{
		{name: "deployment: one per live pod, queue on the template", kind: "Deployment",
			obj: toUnstructured(t, deploymentObj("ns", "web", 2, "2", false)),
			want: []want{{"pod-web-abc-1", "Pod/web-abc-1", "main=1", true}, {"pod-web-abc-2", "Pod/web-abc-2", "main=1", true},
				{"pod-web-old-1", "Pod/web-old-1", "main=1", false}}},
		{name: "statefulset: one gang", kind: KindStatefulSet, obj: toUnstructured(t, statefulSetObj("ns", "db", 3, "1")),
			want: []want{{"statefulset-db", "StatefulSet/db", "main=3", true}}},
		{name: "statefulset scaled to zero", kind: KindStatefulSet, obj: toUnstructured(t, statefulSetObj("ns", "db", 0, "1"))},
		{name: "lws with leader: one gang per group", kind: KindLeaderWorkerSet, obj: lwsObj("ns", "lws", 2, 3, "1", true),
			want: []want{{"leaderworkerset-lws-0", "LeaderWorkerSet/lws-0", "leader=1,worker=2", true},
				{"leaderworkerset-lws-1", "LeaderWorkerSet/lws-1", "leader=1,worker=2", true}}},
		{name: "lws without leader template", kind: KindLeaderWorkerSet, obj: lwsObj("ns", "lws", 1, 2, "1", false),
			want: []want{{"leaderworkerset-lws-0", "LeaderWorkerSet/lws-0", "main=2", true}}},
		{name: "lws too many groups", kind: KindLeaderWorkerSet, obj: lwsObj("ns", "lws", maxServingGroups+1, 2, "1", false),
			wantErr: "spec.replicas"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := servingKindNamed(t, tc.kind)
			o := servingObject{kind: k, u: tc.obj}
			if servingQueue(o) != "lq" {
				t.Fatalf("servingQueue = %q, want lq", servingQueue(o))
			}
			got, err := k.desired(o, pods)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d workloads, want %d", len(got), len(tc.want))
			}
			for i, w := range tc.want {
				wl := got[i].wl
				var sets []string
				for _, ps := range wl.Spec.PodSets {
					sets = append(sets, ps.Name+"="+itoa(ps.Count))
				}
				owner := wl.Spec.Owner.Kind + "/" + wl.Spec.Owner.Name
				if wl.Name != w.name || owner != w.owner || strings.Join(sets, ",") != w.sets || got[i].create != w.create {
					t.Errorf("workload %d = %s owner %s sets %v create %v, want %+v", i, wl.Name, owner, sets, got[i].create, w)
				}
				if wl.Spec.QueueName != "lq" || wl.Annotations[AnnotationServingOwner] != tc.kind+"/"+tc.obj.GetName() {
					t.Errorf("workload %s: queue %q, serving owner %q", wl.Name, wl.Spec.QueueName, wl.Annotations[AnnotationServingOwner])
				}
				if len(wl.OwnerReferences) != 1 {
					t.Errorf("workload %s: owner references %v, want one", wl.Name, wl.OwnerReferences)
				}
			}
		})
	}
}

// TestServingNeedsGantryScheduler: a serving object whose template names another
// scheduler is not queued (its pods would run outside quota); the field is named.
func TestServingNeedsGantryScheduler(t *testing.T) {
	lws := lwsObj("ns", "lws", 1, 2, "1", true)
	if err := unstructured.SetNestedField(lws.Object, "default-scheduler", "spec", "leaderWorkerTemplate", "leaderTemplate", "spec", "schedulerName"); err != nil {
		t.Fatal(err)
	}
	sts := statefulSetObj("ns", "db", 1, "1")
	cases := []struct {
		name, kind string
		obj        *unstructured.Unstructured
		webhook    bool
		want       string
	}{
		{"statefulset names gantry", KindStatefulSet, toUnstructured(t, sts), false, ""},
		{"lws leader names another", KindLeaderWorkerSet, lws, false, "spec.leaderWorkerTemplate.leaderTemplate.spec.schedulerName"},
		{"lws leader names default-scheduler, webhook, no queue label", KindLeaderWorkerSet, lws, true, "spec.leaderWorkerTemplate.leaderTemplate.spec.schedulerName"},
		{"lws without leader template", KindLeaderWorkerSet, lwsObj("ns", "lws", 1, 2, "1", false), false, ""},
		{"queued template names none, no webhook", KindStatefulSet, queuedTemplate(t, toUnstructured(t, sts), ""), false, "spec.template.spec.schedulerName"},
		{"queued template names none, webhook", KindStatefulSet, queuedTemplate(t, toUnstructured(t, sts), ""), true, ""},
		{"queued template names default-scheduler, webhook", KindStatefulSet, queuedTemplate(t, toUnstructured(t, sts), corev1.DefaultSchedulerName), true, ""},
		{"queued template names another, webhook", KindStatefulSet, queuedTemplate(t, toUnstructured(t, sts), "volcano"), true, "spec.template.spec.schedulerName"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := templatesNotGantry(servingObject{kind: servingKindNamed(t, tc.kind), u: tc.obj}, tc.webhook); got != tc.want {
				t.Errorf("templatesNotGantry = %q, want %q", got, tc.want)
			}
		})
	}
}

// queuedTemplate is u with its pod template queued (the Kueue queue label) and naming
// scheduler ("" removes the field).
func queuedTemplate(t *testing.T, u *unstructured.Unstructured, scheduler string) *unstructured.Unstructured {
	t.Helper()
	if err := unstructured.SetNestedField(u.Object, "q", "spec", "template", "metadata", "labels", "kueue.x-k8s.io/queue-name"); err != nil {
		t.Fatal(err)
	}
	if scheduler == "" {
		unstructured.RemoveNestedField(u.Object, "spec", "template", "spec", "schedulerName")
	} else if err := unstructured.SetNestedField(u.Object, scheduler, "spec", "template", "spec", "schedulerName"); err != nil {
		t.Fatal(err)
	}
	return u
}

func itoa(n int32) string { return resource.NewQuantity(int64(n), resource.DecimalSI).String() }

// TestServingOneReader feeds the same serving object to the simulator's loader and to
// the controller (a Deployment through a pod made from its template, as its ReplicaSet
// would): both make the same pod sets.
func TestServingOneReader(t *testing.T) {
	lwt := map[string]any{"size": int64(3), "leaderTemplate": readerTemplate("0"), "workerTemplate": readerTemplate("2")}
	cases := []struct {
		name string
		obj  map[string]any
		want string
	}{
		{"Deployment", readerObject("apps/v1", "Deployment", nil, map[string]any{"replicas": int64(1),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "srv"}}, "template": readerTemplate("1")}), "main:1/1"},
		{"StatefulSet", readerObject("apps/v1", "StatefulSet", nil, map[string]any{"replicas": int64(3),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "srv"}}, "template": readerTemplate("1")}), "main:3/3"},
		{"LeaderWorkerSet group", readerObject(manifest.LWSAPIVersion, "LeaderWorkerSet", nil,
			map[string]any{"replicas": int64(1), "leaderWorkerTemplate": lwt}), "leader:1/1 worker:2/2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sim, err := simulatorPath(t, tc.obj)
			if err != nil {
				t.Fatalf("simulator: %v", err)
			}
			raw, err := json.Marshal(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(raw); err != nil {
				t.Fatal(err)
			}
			var pods []*corev1.Pod
			if u.GetKind() == "Deployment" {
				var tmpl corev1.PodTemplateSpec
				if err := json.Unmarshal(mustJSON(t, tc.obj["spec"].(map[string]any)["template"]), &tmpl); err != nil {
					t.Fatal(err)
				}
				p := replicaSetPod("ns", "j", "abc", "j-abc-x", "1")
				p.Annotations, p.Spec = tmpl.Annotations, tmpl.Spec
				p.Spec.SchedulerName = SchedulerName
				pods = append(pods, p)
			}
			k := servingKindNamed(t, u.GetKind())
			want, err := k.desired(servingObject{kind: k, u: u}, pods)
			if err != nil || len(want) != 1 {
				t.Fatalf("controller: %d workloads, err %v; want one", len(want), err)
			}
			ctl, err := ToAPIWorkload(want[0].wl, 0)
			if err != nil {
				t.Fatal(err)
			}
			sv, cv := viewOf(sim), viewOf(ctl)
			if sv.shape() != tc.want {
				t.Errorf("simulator: %s, want %s", sv.shape(), tc.want)
			}
			if !reflect.DeepEqual(sv, cv) {
				t.Errorf("the paths disagree:\nsimulator  %+v\ncontroller %+v", sv, cv)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStatefulSetBindablePodByPod: a StatefulSet's admitted gang is bound as its pods
// appear (OrderedReady creates one at a time): the first pod alone is bound, then the
// second into a free slot while the first keeps its own.
func TestStatefulSetBindablePodByPod(t *testing.T) {
	pls := []v1alpha1.PodPlacement{{PodSet: "main", Index: 0, Node: "n1"}, {PodSet: "main", Index: 1, Node: "n1"}, {PodSet: "main", Index: 2, Node: "n2"}}
	bound := k8s.MakePod("ns", "db-0").Annotate(AnnotationPodSlot, "main-0").On("n1").Obj()
	cases := []struct {
		name string
		pods []*corev1.Pod
		want []string // pod -> slot bound now
	}{
		{"first pod alone", []*corev1.Pod{k8s.MakePod("ns", "db-0").Obj()}, []string{"db-0->main-0"}},
		{"second pod, first bound", []*corev1.Pod{bound, k8s.MakePod("ns", "db-1").Obj()}, []string{"db-1->main-1"}},
		{"all bound", []*corev1.Pod{bound}, nil},
		{"whole gang at once", []*corev1.Pod{k8s.MakePod("ns", "db-0").Obj(), k8s.MakePod("ns", "db-1").Obj(), k8s.MakePod("ns", "db-2").Obj()},
			[]string{"db-0->main-0", "db-1->main-1", "db-2->main-2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, b := range MatchGang(statefulSetBindable(pls, tc.pods), tc.pods, servingPodSet) {
				got = append(got, b.pod.Name+"->"+slotName(b.slot))
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("bound %v, want %v", got, tc.want)
			}
		})
	}
}

// TestServingOrphans: the Workloads of an object no longer listed (deleted, or its
// queue label removed) are dropped, but only for kinds listed this pass (a kind whose
// informer failed, or whose CRD is gone, keeps its Workloads).
func TestServingOrphans(t *testing.T) {
	wl := func(ns, name, owner string) v1alpha1.Workload {
		w := k8s.MakeWorkload(ns, name).Obj()
		w.Annotations = map[string]string{AnnotationServingOwner: owner}
		return w
	}
	byOwner := servingWorkloadsByOwner([]v1alpha1.Workload{
		wl("a", "statefulset-db", "StatefulSet/db"), wl("a", "pod-web-1", "Deployment/web"), wl("a", "pod-web-2", "Deployment/web"),
		wl("b", "statefulset-db", "StatefulSet/db"), wl("a", "leaderworkerset-l-0", "LeaderWorkerSet/l"),
	})
	live := servingObject{kind: servingKindNamed(t, KindStatefulSet), u: toUnstructured(t, statefulSetObj("a", "db", 1, "1"))}
	cases := []struct {
		name   string
		objs   []servingObject
		listed map[string]bool
		want   []string
	}{
		{"deleted deployment and other namespace's set", []servingObject{live}, map[string]bool{"Deployment": true, KindStatefulSet: true},
			[]string{"a/pod-web-1", "a/pod-web-2", "b/statefulset-db"}},
		{"kind not listed keeps its workloads", nil, map[string]bool{KindStatefulSet: true}, []string{"a/statefulset-db", "b/statefulset-db"}},
		{"nothing listed", nil, map[string]bool{}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, w := range servingOrphans(byOwner, tc.objs, tc.listed) {
				got = append(got, wlKey(w))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("orphans %v, want %v", got, tc.want)
			}
		})
	}
}
