package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	itesting "github.com/gantry-sched/gantry/internal/testing"
	k8s "github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/internal/testing/kubeenv"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/controller"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"
)

// liveEnv is the control plane of this package's live tests, started by the first
// test that needs one (the other tests of the package need none) and stopped by
// TestMain.
var liveEnv struct {
	once sync.Once
	env  *kubeenv.Env
	err  error
}

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	code := m.Run()
	liveEnv.env.Stop()
	os.Exit(code)
}

// requireLiveEnv returns the control plane, starting it on first use; under -short
// the test is skipped, and without the binaries it fails, as kubeenv.Require does.
func requireLiveEnv(t *testing.T) *kubeenv.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a control plane; skipped under -short (" + kubeenv.HowToInstall + ")")
	}
	liveEnv.once.Do(func() {
		liveEnv.env, liveEnv.err = kubeenv.Start(kubeenv.Options{CRDDirs: []string{"../../config/crd/bases"}})
	})
	if liveEnv.err != nil {
		t.Fatalf("cannot start the test control plane: %v", liveEnv.err)
	}
	return liveEnv.env
}

// liveWorld is one small cluster as objects and as the manifests of the same objects:
// ClusterQueue "train" holds 8 H100s over two 8-GPU nodes; Job "a-run" takes them all,
// so Job "b-wait", submitted after it (a minute later in the simulation), cannot be
// admitted.
type liveWorld struct {
	flavor *k8s.FlavorWrapper
	cq     *k8s.ClusterQueueWrapper
	lq     *k8s.LocalQueueWrapper
	nodes  []*corev1.Node
	run    *k8s.JobWrapper
	wait   *k8s.JobWrapper
}

const liveNS = "live"

func newLiveWorld() liveWorld {
	job := func(name string) *k8s.JobWrapper {
		return k8s.MakeJob(liveNS, name).Queue("lq").GPUs("8").Annotate(api.AnnotationDuration, "1h")
	}
	return liveWorld{
		flavor: k8s.MakeFlavor("h100"),
		cq:     k8s.MakeClusterQueue("train").Quota("h100", "nvidia.com/gpu", "8"),
		lq:     k8s.MakeLocalQueue(liveNS, "lq", "train"),
		nodes:  []*corev1.Node{k8s.MakeNode("n1").H100(8).Obj(), k8s.MakeNode("n2").H100(8).Obj()},
		run:    job("a-run"),
		wait:   job("b-wait").Annotate(api.AnnotationSubmitAt, "1m"),
	}
}

// writeFiles writes the world as manifests for -f, one file per object.
func (w liveWorld) writeFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	docs := []string{w.flavor.YAML(), w.cq.YAML(), w.lq.YAML(), w.run.YAML(), w.wait.YAML()}
	for _, n := range w.nodes {
		n = n.DeepCopy()
		n.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}
		b, err := yaml.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	for i, d := range docs {
		if err := os.WriteFile(filepath.Join(dir, "obj"+string(rune('a'+i))+".yaml"), []byte(d), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// create makes the world's queues and nodes (with their status) on the cluster.
func (w liveWorld) create(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: liveNS}}, w.flavor.Obj(), w.cq.Obj(), w.lq.Obj()} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
	for _, n := range w.nodes {
		n = n.DeepCopy()
		status := n.Status
		if err := c.Create(ctx, n); err != nil {
			t.Fatalf("create node %s: %v", n.Name, err)
		}
		n.Status = status // Create drops it: status is a subresource
		if err := c.Status().Update(ctx, n); err != nil {
			t.Fatalf("node %s status: %v", n.Name, err)
		}
	}
}

// startController runs Gantry's controller in-process with the policy `gantry
// simulate` runs by default, until the test ends.
func startController(ctx context.Context, t *testing.T, env *kubeenv.Env) {
	t.Helper()
	def := engine.DefaultPolicy()
	mgr, _, err := controller.NewManager(env.Config, controller.ManagerOptions{
		Controller:  controller.Options{Engine: def.Config, Interval: 100 * time.Millisecond, Seed: def.Seed},
		MetricsAddr: "0", HealthAddr: "0", Log: logr.Discard(), Registry: prometheus.NewRegistry(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// waitWorkload polls Workload name until ok accepts it; the failure shows its last
// status.
func waitWorkload(ctx context.Context, t *testing.T, c client.Client, name string, ok func(*v1alpha1.Workload) bool) {
	t.Helper()
	var wl v1alpha1.Workload
	for {
		err := c.Get(ctx, client.ObjectKey{Namespace: liveNS, Name: name}, &wl)
		if err == nil && ok(&wl) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("workload %s: gave up waiting (%v); last status %+v", name, err, wl.Status)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// The acceptance: on a cluster, `gantry get workloads` and `gantry explain`
// (as `kubectl gantry` runs them) give the same reason for a workload that cannot be
// admitted as `gantry explain` gives over the same objects written as files; the
// queue table is the same in both.
func TestLiveGetAndExplainMatchFiles(t *testing.T) {
	env := requireLiveEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	scheme, err := controller.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	world := newLiveWorld()
	dir := world.writeFiles(t)
	world.create(ctx, t, c)
	startController(ctx, t, env)
	// One at a time, so the cluster admits a-run first, as the simulation does.
	if err := c.Create(ctx, world.run.Obj()); err != nil {
		t.Fatal(err)
	}
	waitWorkload(ctx, t, c, controller.WorkloadNameForJob("a-run"), func(wl *v1alpha1.Workload) bool { return wl.Status.Admission != nil })
	if err := c.Create(ctx, world.wait.Obj()); err != nil {
		t.Fatal(err)
	}
	waitWorkload(ctx, t, c, controller.WorkloadNameForJob("b-wait"), func(wl *v1alpha1.Workload) bool { return wl.Status.Layer != "" })

	files := []string{"-f", dir, "--at", "1m"}
	live := []string{"--kubeconfig", env.Kubeconfig}
	fileText := mustRun(t, newExplainCommand(), append([]string{liveNS + "/b-wait"}, files...)...)
	liveText := mustRun(t, newExplainCommand(), append([]string{liveNS + "/b-wait"}, live...)...)
	for _, field := range []string{"reason", "held by", "phase", "clusterQueue", "queue position", "to admit it"} {
		if got, want := explainField(liveText, field), explainField(fileText, field); got != want || got == "" {
			t.Errorf("%s: live %q, files %q\nlive:\n%s\nfiles:\n%s", field, got, want, liveText, fileText)
		}
	}

	// Both estimate the ETA from quota the same way: once a-run (1h expected) ends.
	// (The cluster names the Workload of Job a-run, the files the Job.)
	liveETA := strings.ReplaceAll(explainField(liveText, "ETA"), controller.WorkloadNameForJob("a-run"), "a-run")
	fileETA := explainField(fileText, "ETA")
	if _, basis, ok := strings.Cut(fileETA, " ("); !ok || !strings.Contains(basis, "ends") || !strings.HasSuffix(liveETA, basis) {
		t.Errorf("ETA: live %q, files %q; want the same quota estimate", liveETA, fileETA)
	}

	liveRows := itesting.TableRows(mustRun(t, newGetCommand(), append([]string{"workloads", "-n", liveNS}, live...)...), "NAME")
	fileRows := itesting.TableRows(mustRun(t, newGetCommand(), append([]string{"workloads"}, files...)...), "NAME")
	lw, fw := liveRows[liveNS+"/"+controller.WorkloadNameForJob("b-wait")], fileRows[liveNS+"/b-wait"]
	for _, col := range []string{"QUEUE", "PHASE", "POSITION", "LAYER", "REASON", "GPUS"} {
		if lw[col] != fw[col] || lw[col] == "" {
			t.Errorf("get workloads %s: live %q, files %q\nlive %v\nfiles %v", col, lw[col], fw[col], liveRows, fileRows)
		}
	}
	if explainField(liveText, "reason") != lw["REASON"] && !strings.HasPrefix(explainField(liveText, "reason"), lw["REASON"]) {
		t.Errorf("live explain reason %q, live get reason %q", explainField(liveText, "reason"), lw["REASON"])
	}

	t.Logf("gantry get workloads -n %s:\n%s", liveNS, mustRun(t, newGetCommand(), append([]string{"workloads", "-n", liveNS}, live...)...))
	liveQueues := mustRun(t, newGetCommand(), append([]string{"queues"}, live...)...)
	fileQueues := mustRun(t, newGetCommand(), append([]string{"queues"}, files...)...)
	if liveQueues != fileQueues {
		t.Errorf("get queues differs:\nlive\n%s\nfiles\n%s", liveQueues, fileQueues)
	}

	// The same through kubectl's plugin mechanism, as an operator types it (last: it
	// skips where kubectl is not installed).
	kubectlText := kubectlPlugin(t)(append([]string{"explain", liveNS + "/b-wait"}, live...)...)
	t.Logf("kubectl gantry explain %s/b-wait:\n%s", liveNS, kubectlText)
	if got, want := explainField(kubectlText, "reason"), explainField(fileText, "reason"); got != want {
		t.Errorf("kubectl gantry explain: reason %q, files %q\n%s", got, want, kubectlText)
	}
}
