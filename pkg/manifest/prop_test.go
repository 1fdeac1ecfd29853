package manifest

import (
	"fmt"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"
)

// genContainer draws a container with integer CPU (milli) and GPU requests or limits.
func genContainer(t *rapid.T, label string, sidecar bool) corev1.Container {
	c := corev1.Container{Name: label, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}}
	cpu := rapid.Int64Range(0, 64000).Draw(t, label+"-cpu")
	c.Resources.Requests[corev1.ResourceCPU] = *resource.NewMilliQuantity(cpu, resource.DecimalSI)
	gpu := rapid.Int64Range(0, 8).Draw(t, label+"-gpu")
	if rapid.Bool().Draw(t, label+"-gpu-as-limit") {
		c.Resources.Limits["nvidia.com/gpu"] = *resource.NewQuantity(gpu, resource.DecimalSI)
	} else {
		c.Resources.Requests["nvidia.com/gpu"] = *resource.NewQuantity(gpu, resource.DecimalSI)
	}
	if sidecar {
		always := corev1.ContainerRestartPolicyAlways
		c.RestartPolicy = &always
	}
	return c
}

// Property: a pod's effective request is at least what every phase of the pod needs:
// all regular containers plus all sidecars together, and each regular init container
// plus the sidecars started before it; and it equals the largest of those.
func TestPodRequestsBoundProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var spec corev1.PodSpec
		for i := range rapid.IntRange(1, 4).Draw(t, "containers") {
			spec.Containers = append(spec.Containers, genContainer(t, fmt.Sprintf("c%d", i), false))
		}
		for i := range rapid.IntRange(0, 4).Draw(t, "inits") {
			spec.InitContainers = append(spec.InitContainers, genContainer(t, fmt.Sprintf("i%d", i), rapid.Bool().Draw(t, fmt.Sprintf("i%d-sidecar", i))))
		}
		var list ErrorList
		got := podRequests(spec, "spec", errs{list: &list})
		if len(list) > 0 {
			t.Fatalf("unexpected errors: %v", list)
		}
		amount := func(c corev1.Container, n corev1.ResourceName) resources.Amount {
			q, ok := c.Resources.Requests[n]
			if !ok {
				q = c.Resources.Limits[n]
			}
			a, _ := resources.FromQuantity(resources.Name(n), q)
			return a
		}
		for _, n := range []corev1.ResourceName{corev1.ResourceCPU, "nvidia.com/gpu"} {
			var running, sidecars, need resources.Amount
			for _, c := range spec.Containers {
				running += amount(c, n)
			}
			for _, c := range spec.InitContainers {
				if c.RestartPolicy != nil {
					sidecars += amount(c, n)
					continue
				}
				need = max(need, amount(c, n)+sidecars)
			}
			need = max(need, running+sidecars)
			if got[resources.Name(n)] != need {
				t.Fatalf("%s: effective %d, want %d", n, got[resources.Name(n)], need)
			}
		}
	})
}

// Property: for any quota triple, the ClusterQueue loads with exactly those amounts, or
// (lending above nominal) with one error on lendingLimit.
func TestQuotaRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nominal := rapid.Int64Range(0, 1<<20).Draw(t, "nominal")
		borrow := rapid.Int64Range(0, 1<<20).Draw(t, "borrow")
		lend := rapid.Int64Range(0, 1<<20).Draw(t, "lend")
		in := docs(k8s.MakeFlavor("f").YAML(), fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: q}
spec:
  cohort: c
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: f
      resources:
      - {name: nvidia.com/gpu, nominalQuota: %d, borrowingLimit: "%d", lendingLimit: %d}
`, nominal, borrow, lend))
		objs, err := LoadBytes("in.yaml", []byte(in))
		if lend > nominal {
			list, _ := err.(ErrorList)
			if len(list) != 1 || list[0].Field != "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit" {
				t.Fatalf("want one lendingLimit error, got %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		rq := objs.ClusterQueues[0].ResourceGroups[0].Flavors[0].Resources[0]
		if int64(rq.Nominal) != nominal || int64(*rq.BorrowingLimit) != borrow || int64(*rq.LendingLimit) != lend {
			t.Fatalf("quota %+v, want %d/%d/%d", rq, nominal, borrow, lend)
		}
	})
}
