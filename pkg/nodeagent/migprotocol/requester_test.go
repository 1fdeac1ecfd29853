package migprotocol

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/gantry-sched/gantry/pkg/nodeagent/migparted"
)

func migNodeObj(labels, annotations map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: labels, Annotations: annotations}}
}

func requester(t *testing.T, node *corev1.Node) (Requester, *fake.Clientset) {
	t.Helper()
	spec, err := migparted.Default()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientset(node)
	return Requester{Client: c, Spec: spec, Poll: time.Millisecond}, c
}

func countPatches(c *fake.Clientset) int {
	n := 0
	for _, a := range c.Actions() {
		if a.GetVerb() == "patch" {
			n++
		}
	}
	return n
}

func TestMIGRequest(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		config string
		// wantLabels are the node's MIG labels afterwards ("-" absent); wantPatches the
		// writes; wantErr a fragment of the error.
		wantConfig, wantState string
		wantPatches           int
		wantErr               string
	}{
		{"new config clears the old state", map[string]string{LabelConfig: "all-disabled", LabelConfigState: "success"},
			"all-balanced", "all-balanced", "-", 1, ""},
		{"first config", nil, "all-1g.10gb", "all-1g.10gb", "-", 1, ""},
		{"same config changes nothing", map[string]string{LabelConfig: "all-balanced", LabelConfigState: "pending"},
			"all-balanced", "all-balanced", "pending", 0, ""},
		{"config not in the file", map[string]string{LabelConfig: "all-disabled"},
			"custom", "all-disabled", "-", 0, `MIG config "custom" is not in config-default.yaml (configs: all-1g.10gb,`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, c := requester(t, migNodeObj(tc.labels, nil))
			err := r.Request(context.Background(), "n1", tc.config)
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			n, _ := c.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
			state, ok := n.Labels[LabelConfigState]
			if !ok {
				state = "-"
			}
			if n.Labels[LabelConfig] != tc.wantConfig || state != tc.wantState {
				t.Errorf("labels %v, want config %s state %s", n.Labels, tc.wantConfig, tc.wantState)
			}
			if got := countPatches(c); got != tc.wantPatches {
				t.Errorf("%d patches, want %d", got, tc.wantPatches)
			}
		})
	}
}

func TestMIGWait(t *testing.T) {
	labels := func(state string) map[string]string {
		return map[string]string{LabelConfig: "all-balanced", LabelConfigState: state}
	}
	tests := []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		// later, when set, is the state the manager writes after a few polls.
		later     string
		wantState State
		wantErr   string
	}{
		{"success", labels("success"), nil, "", Success, ""},
		{"failed with Gantry's detail", labels("failed"),
			map[string]string{AnnotationState: "failed all-balanced: GPU 3: MIG mode change pending until the GPU is reset"},
			"", Failed, "MIG config all-balanced failed: GPU 3: MIG mode change pending"},
		{"failed by NVIDIA's manager", labels("failed"), nil, "", Failed, "no detail"},
		{"pending, then success", labels("pending"), nil, "success", Success, ""},
		{"no state yet, then failed", map[string]string{LabelConfig: "all-balanced"}, nil, "failed", Failed, "failed"},
		{"rebooting until the deadline", labels("rebooting"), nil, "", Rebooting, `still "rebooting"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, c := requester(t, migNodeObj(tc.labels, tc.annotations))
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			if tc.later != "" {
				go func() {
					time.Sleep(10 * time.Millisecond)
					setState(ctx, c, Status{Config: "all-balanced", State: State(tc.later)})
				}()
			}
			st, err := r.Wait(ctx, "n1")
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if st.State != tc.wantState || st.Config != "all-balanced" {
				t.Errorf("status %+v, want %s of all-balanced", st, tc.wantState)
			}
		})
	}
}

// setState reports st on node n1 as a MIG manager does: the state label and Gantry's
// detail annotation.
func setState(ctx context.Context, c *fake.Clientset, st Status) {
	n, err := c.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		return
	}
	n.Labels[LabelConfigState] = string(st.State)
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[AnnotationState] = st.Annotation()
	_, _ = c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
}
