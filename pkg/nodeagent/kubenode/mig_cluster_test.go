package kubenode_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gantry-sched/gantry/internal/cli"
	"github.com/gantry-sched/gantry/internal/testing/kubeenv"
	"github.com/gantry-sched/gantry/internal/testing/mocknode/nvmlmock"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/kubenode"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
)

var env *kubeenv.Env

func TestMain(m *testing.M) { os.Exit(kubeenv.RunMain(m, kubeenv.Options{}, &env)) }

// On a real API server, `gantry mig request` asks a node for a config through
// nvidia.com/mig.config and Gantry's MIG manager, reading the same Node, pauses the GPU
// Operator's operands, applies the config to the (mock) GPUs, reports success and
// resumes the operands; the request returns when it sees the success.
func TestMIGRequestAndManagerOnTheAPIServer(t *testing.T) {
	e := kubeenv.Require(t, env)
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	operands := map[string]string{
		migprotocol.LabelDeployPrefix + "device-plugin": "true",
		migprotocol.LabelDeployPrefix + "dcgm-exporter": "false",
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-17", Labels: operands}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gpus, err := nvmlmock.New(nvmlmock.DGXA100)
	if err != nil {
		t.Fatal(err)
	}
	node := &kubenode.Node{Client: cs, Name: "gpu-17", Now: time.Now}
	mgr := nodeagent.NewMIGManager(gpus, node, node, nodeagent.MIGOptions{})
	// Every version of the Node, to see the operand paused while the change runs.
	w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=gpu-17"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	paused := make(chan bool, 1)
	go func() {
		saw := false
		defer func() { paused <- saw }()
		for ev := range w.ResultChan() {
			if n, ok := ev.Object.(*corev1.Node); ok {
				saw = saw || n.Labels[migprotocol.LabelDeployPrefix+"device-plugin"] == migprotocol.OperandPaused
				if n.Labels[migprotocol.LabelConfigState] == string(migprotocol.Success) {
					return
				}
			}
		}
	}()
	go func() { // the agent's poll loop, fast
		for ctx.Err() == nil {
			_, _ = mgr.Reconcile(ctx)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	var out, errOut bytes.Buffer
	code := cli.Main([]string{"mig", "request", "--node", "gpu-17", "--config", "all-balanced", "--kubeconfig", e.Kubeconfig, "--poll", "50ms", "--timeout", "30s"},
		strings.NewReader(""), &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if want := "node gpu-17: nvidia.com/mig.config=all-balanced\nnode gpu-17: nvidia.com/mig.config.state=success\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
	n, err := cs.CoreV1().Nodes().Get(ctx, "gpu-17", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range operands {
		if n.Labels[k] != v {
			t.Errorf("operand label %s = %q after the change, want %q restored", k, n.Labels[k], v)
		}
	}
	if !<-paused {
		t.Error("the device plugin was never paused while the change ran")
	}
	d, err := nodeagent.Discover(gpus, devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range d.GPUs {
		if got := len(g.MIG); got != 4 { // all-balanced on an A100-40GB: 1g.5gb x2, 2g.10gb, 3g.20gb
			t.Errorf("GPU %d has %d MIG devices after all-balanced, want 4", g.Index, got)
		}
	}
}
