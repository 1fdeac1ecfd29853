//go:build k8sscale

package controller

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/kubeenv"
	corev1 "k8s.io/api/core/v1"
)

// TestBenchK8sFleet (make bench-k8s-fleet) runs Gantry alone at a fleet's size: the
// test control plane plus KWOK with GANTRY_FLEET_NODES nodes of 8 GPUs (default 10,000)
// and GANTRY_FLEET_PODS one-GPU pods in plain-pod gangs of 8 (default 100,000), created
// as fast as the API server takes them while Gantry binds. More pods than GPUs: KWOK
// ends each pod GANTRY_FLEET_RUN_SECONDS (default 300) after it runs, and Gantry must
// see its gang finish and give the GPUs to the gangs still waiting. The checks are the
// other scenarios' (every pod bound once, gangs whole, no GPU or device of a live pod
// given twice); it prints one table row with the run's figures.
func TestBenchK8sFleet(t *testing.T) {
	shape := benchShape{nodes: envInt("GANTRY_FLEET_NODES", 10000), pods: envInt("GANTRY_FLEET_PODS", 100000)}
	shape.pods -= shape.pods % benchGang
	runFor := time.Duration(envInt("GANTRY_FLEET_RUN_SECONDS", 300)) * time.Second
	if shape.pods == 0 {
		t.Fatalf("GANTRY_FLEET_PODS=%d: want at least %d pods", envInt("GANTRY_FLEET_PODS", 0), benchGang)
	}
	// KWOK patches each pod twice (Running, then Succeeded); at its default four at
	// once it, not the binder, would bound the run.
	cs := startBench(t, kubeenv.KWOKOptions{FinishAfter: runFor, Parallelism: 32})
	sc := benchScenario{row: fmt.Sprintf("Gantry, plain-pod gangs of %d, each pod running %s, QPS %d", benchGang, runFor, benchBinderQPS),
		sub: "gantry-fleet", gang: gantryGang, gangs: true, setup: (*benchRun).setupQueues, start: (*benchRun).startGantryInProcess,
		submit: func(b *benchRun) { b.createPodsWith(SchedulerName, true, finishing) }}
	began := time.Now()
	r := runScenario(t, cs, shape, sc)
	t.Logf("the scenario took %s (nodes, pods, checks; the teardown follows)", time.Since(began).Round(time.Second))
	fmt.Printf("\n%d nodes x %d GPUs (KWOK), %d one-GPU pods (%d gangs), each ending %s after it runs, kube-apiserver %s + etcd, %d CPUs\n\n",
		shape.nodes, benchNodeGPUs, shape.pods, shape.pods/benchGang, runFor, kubeenv.KubeVersion, runtime.NumCPU())
	fmt.Print(fleetTable(sc.row, r))
}

// fleetTable is the fleet run's one row: no ratios, since nothing else runs at this
// size, and the whole run's length (first create to last bind).
func fleetTable(row string, r benchResult) string {
	return "| binder | pods/s | first create → last bind | pod seen → bound p50 / p99 | gang created → all bound p50 / p99 |\n" +
		"|---|---|---|---|---|\n" +
		fmt.Sprintf("| %s | %.0f | %s | %s | %s |\n", row, r.rate(), fmtDuration(r.elapsed), latencyCell(r.podLat), latencyCell(r.gangLat))
}

// finishing marks a pod for KWOK's finish stage (StartKWOKWith's FinishAfter).
func finishing(p *corev1.Pod) {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[kubeenv.KWOKFinishAnnotation] = "true"
}
