package kubeenv

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

var env *Env

func TestMain(m *testing.M) { os.Exit(RunMain(m, Options{ControllerManager: true}, &env)) }

// TestControlPlaneServesNodesAndRunsJobController checks the pieces the controller's
// integration tests rely on: the server reports the pinned version, accepts plain
// Node objects without tainting them, and the Job controller creates a Job's pods.
func TestControlPlaneServesNodesAndRunsJobController(t *testing.T) {
	e := Require(t, env)
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != KubeVersion {
		t.Errorf("server version = %q, want %q", v.GitVersion, KubeVersion)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}}}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create node: %v", err)
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "default"},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](2), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
		}}},
	}
	if _, err := cs.BatchV1().Jobs("default").Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create job: %v", err)
	}
	for {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=j"})
		if err == nil && len(pods.Items) == 2 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the Job controller did not create 2 pods: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestFindBinariesNamesTheFix checks the message a machine without binaries gets.
func TestFindBinariesNamesTheFix(t *testing.T) {
	t.Setenv("GANTRY_KUBE_BIN", t.TempDir())
	_, err := FindBinaries(true)
	if err == nil {
		t.Fatal("FindBinaries found binaries in an empty directory")
	}
	for _, want := range []string{"kube-apiserver is missing", "kube-controller-manager is missing", "make test-env"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
