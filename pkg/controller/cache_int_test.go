package controller

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// h100Queue creates a node with gpus H100s, the h100 flavor, ClusterQueue cq with
// quota GPUs of it, and LocalQueue "lq" of the test's namespace pointing at cq.
func (f *fixture) h100Queue(node string, gpus int, cq, quota string) {
	f.create(k8s.MakeNode(node).H100(gpus).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue(cq).Quota("h100", "nvidia.com/gpu", quota).Obj(), k8s.MakeLocalQueue("", "lq", cq).Obj())
}

// TestQueueChangeReachesNextPass: a Job over its ClusterQueue's quota waits; raising
// the quota (a spec change the cache converts once) admits and binds it.
func TestQueueChangeReachesNextPass(t *testing.T) {
	f := newFixture(t)
	f.h100Queue("qc-1", 4, "qc-cq", "2")
	f.startController()
	f.create(k8s.MakeJob("", "big").Queue("lq").Pods(1).GPUs("4").Obj())
	f.eventually(20*time.Second, "big pending on quota", func() (bool, string) {
		wl := f.workload(WorkloadNameForJob("big"))
		if wl == nil {
			return false, "no workload yet"
		}
		return wl.Status.State == v1alpha1.StatePending && wl.Status.Reason != "", string(wl.Status.State) + " " + wl.Status.Message
	})
	var cq v1alpha1.ClusterQueue
	if err := f.c.Get(f.ctx, client.ObjectKey{Name: "qc-cq"}, &cq); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(cq.DeepCopy())
	cq.Spec.ResourceGroups[0].Flavors[0].Resources[0].NominalQuota = resource.MustParse("4")
	if err := f.c.Patch(f.ctx, &cq, patch); err != nil {
		t.Fatal(err)
	}
	f.waitBound("big", 1)
}

// requestLog records the List requests (GETs of a collection, not watches) a client
// sends.
type requestLog struct {
	mu    sync.Mutex
	lists []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if isList(r) {
			l.mu.Lock()
			l.lists = append(l.lists, r.URL.Path)
			l.mu.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

// take returns the Lists recorded so far and forgets them.
func (l *requestLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lists
	l.lists = nil
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// isList: a GET of /api/v1/<resource>, /apis/<group>/<version>/<resource>, or the same
// under namespaces/<ns>/, without watch=true.
func isList(r *http.Request) bool {
	if r.Method != http.MethodGet || r.URL.Query().Get("watch") == "true" {
		return false
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		rest = parts[3:]
	default:
		return false
	}
	return len(rest) == 1 || (len(rest) == 3 && rest[0] == "namespaces")
}

// TestPassesMakeNoListCalls: once started (informers listed, one consistent read of the
// Workloads), passes read the cache only: admitting and binding a Job takes several
// passes and not one List request.
func TestPassesMakeNoListCalls(t *testing.T) {
	f := newFixture(t)
	f.h100Queue("nl-1", 4, "nl-cq", "4")
	var log requestLog
	cfg := rest.CopyConfig(f.shippedIdentity())
	cfg.Wrap(log.wrap)
	f.startControllerAs(cfg)
	f.eventually(10*time.Second, "first pass", func() (bool, string) { return f.passCount() > 0, "no pass yet" })
	if startup := log.take(); len(startup) == 0 {
		t.Fatalf("no List recorded at start-up; the informers list, so the log does not see requests")
	}
	before := f.passCount()
	f.create(k8s.MakeJob("", "j").Queue("lq").Pods(2).GPUs("2").Obj())
	f.waitBound("j", 2)
	if passes := f.passCount() - before; passes < 2 {
		t.Fatalf("%d passes ran; want several", passes)
	}
	if lists := log.take(); len(lists) > 0 {
		t.Errorf("passes sent %d List requests: %v; want none", len(lists), lists)
	}
}
