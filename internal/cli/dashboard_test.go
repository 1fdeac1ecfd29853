package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	k8s "github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/controller"
	"github.com/gantry-sched/gantry/pkg/manifest"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/report"
	"github.com/gantry-sched/gantry/pkg/view"
	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// dashboardURL matches the line a dashboard prints once it listens.
var dashboardURL = regexp.MustCompile(`on (http://127\.0\.0\.1:\d+/)`)

// startServing runs serve (a dashboard command) in the background with stderr read
// here, waits for the line saying where it listens and returns the URL; the dashboard
// stops when the test ends, and must return nil then.
func startServing(t *testing.T, serve func(ctx context.Context, stderr io.Writer) error) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serve(ctx, pw)
		pw.Close()
		done <- err
	}()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := dashboardURL.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		close(urls)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the dashboard returned %v when stopped", err)
		}
	})
	url, ok := <-urls
	if !ok {
		cancel()
		t.Fatalf("the dashboard stopped before listening: %v", <-done)
	}
	return url
}

// fetch GETs url and returns the body, failing on any status but 200.
func fetch(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

func TestDashboardServesASimulation(t *testing.T) {
	url := startServing(t, func(ctx context.Context, stderr io.Writer) error {
		cmd := newDashboardCommand()
		cmd.SetArgs([]string{"-f", "../../examples/", "--bind-address", "127.0.0.1:0"})
		cmd.SetOut(io.Discard)
		cmd.SetErr(stderr)
		return cmd.ExecuteContext(ctx)
	})
	if page := fetch(t, url+"workloads?at=65m"); !strings.Contains(page, "ml-research/bert-pretrain") || !strings.Contains(page, "simulated time 1h05m of 2h10m") {
		t.Errorf("the workloads page at 65m does not show bert-pretrain waiting:\n%s", page)
	}
	var snap view.Snapshot
	if err := json.Unmarshal([]byte(fetch(t, url+"api/snapshot?at=65m")), &snap); err != nil {
		t.Fatal(err)
	}
	if snap.Source != "simulation" || snap.Elapsed != 65*time.Minute || len(snap.Nodes) == 0 {
		t.Errorf("snapshot from %q at %s with %d nodes, want the simulation at 1h05m", snap.Source, snap.Elapsed, len(snap.Nodes))
	}
	if page := fetch(t, url); !strings.Contains(page, "Gantry simulation of ../../examples/") {
		t.Errorf("the overview is not titled after the inputs")
	}
}

// ServeSimulation is what `gantry simulate --serve` calls after its run.
func TestServeSimulation(t *testing.T) {
	objs, err := manifest.Load([]string{"../../examples/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var f simFlags
	opts, err := f.options(objs)
	if err != nil {
		t.Fatal(err)
	}
	kpis := report.NewKPICollector(report.KPIOptions{})
	opts.Observers = []sim.Observer{kpis}
	s, err := sim.New(objs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	rep := kpis.Report(sim.Seconds(s.Now()))
	url := startServing(t, func(ctx context.Context, stderr io.Writer) error {
		cmd := &cobra.Command{}
		cmd.SetContext(ctx)
		cmd.SetErr(stderr)
		return ServeSimulation(cmd, objs, opts, rep, "127.0.0.1:0", []string{"examples/"})
	})
	if page := fetch(t, url+"nodes?at=0s"); !strings.Contains(page, "h100-full-0") || !strings.Contains(page, "simulated time 0s of 2h10m") {
		t.Errorf("the nodes page at 0s does not show the examples' nodes")
	}
}

func TestDashboardRefusesBadFlags(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty-kubeconfig")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", empty)
	t.Setenv("HOME", t.TempDir())
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"files and a cluster", []string{"-f", "../../examples/", "--kubeconfig", empty}, "give one or the other"},
		{"an address without a port", []string{"-f", "../../examples/", "--bind-address", "8090"}, `--bind-address: dashboard address "8090"`},
		{"no refresh", []string{"--refresh", "0s"}, "--refresh 0s: must be positive"},
		{"no cluster to read", nil, "no cluster to read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := newDashboardCommand()
			cmd.SetArgs(tc.args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// The controller's dashboard reads the cluster through the controller's client.
func TestControllerDashboard(t *testing.T) {
	scheme, err := controller.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("train").Cohort("org").Quota("h100", "nvidia.com/gpu", "8").Obj(),
		k8s.MakeNode("gpu-node-1").H100(8).Obj(),
	).Build()
	srv, err := controllerDashboard(":0", c, "https://api.example:6443")
	if err != nil {
		t.Fatal(err)
	}
	if srv.Addr != "127.0.0.1:0" {
		t.Errorf("a port alone binds %s, want 127.0.0.1 only", srv.Addr)
	}
	ts := httptest.NewServer(srv.Handler)
	defer ts.Close()
	for path, want := range map[string][]string{
		"/":       {`data-queue="train"`, `data-cohort="org"`, "https://api.example:6443", "reloads every 10s"},
		"/nodes":  {`data-node="gpu-node-1"`},
		"/charts": {`id="chart-live-allocation"`},
	} {
		page := fetch(t, ts.URL+path)
		for _, w := range want {
			if !strings.Contains(page, w) {
				t.Errorf("%s lacks %q", path, w)
			}
		}
	}
	if _, err := controllerDashboard("nope", c, ""); err == nil || !strings.Contains(err.Error(), "--dashboard-bind-address") {
		t.Errorf("a bad address: %v", err)
	}
}
