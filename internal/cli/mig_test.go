package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
)

func TestMigRequest(t *testing.T) {
	custom := filepath.Join(t.TempDir(), "mig.yaml")
	if err := os.WriteFile(custom, []byte("version: v1\nmig-configs:\n  mine:\n    - devices: all\n      mig-enabled: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		f    migRequestFlags
		// state is the node's state label when the command starts; want fragments of
		// the output or the error.
		state            string
		wantOut, wantErr string
		wantLabel        string
	}{
		{"default file, applied", migRequestFlags{node: "n1", config: "all-balanced", wait: true}, "",
			"nvidia.com/mig.config.state=success", "", "all-balanced"},
		{"no wait", migRequestFlags{node: "n1", config: "all-1g.10gb"}, "",
			"nvidia.com/mig.config=all-1g.10gb", "", "all-1g.10gb"},
		{"custom file", migRequestFlags{node: "n1", config: "mine", configFile: custom}, "",
			"nvidia.com/mig.config=mine", "", "mine"},
		{"name not in the file", migRequestFlags{node: "n1", config: "all-balanced", configFile: custom}, "",
			"", `MIG config "all-balanced" is not in ` + custom, "all-disabled"},
		{"unreadable file", migRequestFlags{node: "n1", config: "x", configFile: custom + ".missing"}, "",
			"", "mig.yaml.missing", "all-disabled"},
		{"missing flags", migRequestFlags{config: "all-balanced"}, "", "", "--node and --config are required", "all-disabled"},
		{"failed", migRequestFlags{node: "n1", config: "all-balanced", wait: true, timeout: time.Second}, "failed",
			"", "MIG config all-balanced failed", "all-balanced"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1",
				Labels: map[string]string{migprotocol.LabelConfig: "all-disabled"}}})
			if tc.f.wait {
				// The node's MIG manager: answers the request with a final state.
				go answer(t, client, map[bool]string{true: "success", false: tc.state}[tc.state == ""])
			}
			var out bytes.Buffer
			if tc.f.timeout == 0 {
				tc.f.timeout = 5 * time.Second
			}
			tc.f.poll = 5 * time.Millisecond
			err := runMIGRequest(context.Background(), &out, func() (kubernetes.Interface, error) { return client, nil }, tc.f)
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("output %q lacks %q", out.String(), tc.wantOut)
			}
			n, _ := client.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
			if got := n.Labels[migprotocol.LabelConfig]; got != tc.wantLabel {
				t.Errorf("label %s=%q, want %q", migprotocol.LabelConfig, got, tc.wantLabel)
			}
		})
	}
}

// answer waits for the request to clear the state label, then writes state.
func answer(t *testing.T, client *fake.Clientset, state string) {
	for i := 0; i < 200; i++ {
		n, err := client.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
		if err == nil && n.Labels[migprotocol.LabelConfig] != "all-disabled" {
			n.Labels[migprotocol.LabelConfigState] = state
			if _, err := client.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
				t.Errorf("answering: %v", err)
			}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
