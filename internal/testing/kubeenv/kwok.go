package kubeenv

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// KWOKNodeAnnotation marks the Nodes whose kubelet StartKWOK's KWOK plays (value
// KWOKNodeValue); other Nodes are left alone.
const (
	KWOKNodeAnnotation = "kwok.x-k8s.io/node"
	KWOKNodeValue      = "fake"
)

// kwokStages are the Stage objects KWOK runs (v0.8.0 exits with "no stages found"
// without them): the node-initialize, pod-ready and pod-delete stages of KWOK's "fast"
// set. Node heartbeats are left out, since no node lifecycle controller runs here to
// read them, and pods stay Running (no pod-complete), so every bound pod holds its GPUs.
const kwokStages = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-initialize
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'NotIn'
      values:
      - 'True'
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $lastTransitionTime := or .metadata.creationTimestamp $now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $lastTransitionTime | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type  | Quote}}
      {{ end }}
      addresses:
      {{ with NodeIP }}
      - address: {{ . | Quote }}
        type: InternalIP
      {{ end }}
      {{ with NodeName }}
      - address: {{ . | Quote }}
        type: Hostname
      {{ end }}
      allocatable:
      {{ with .status.allocatable }}
      {{ YAML . 1 }}
      {{ else }}
        cpu: 1k
        memory: 1Ti
        pods: 1M
      {{ end }}
      capacity:
      {{ with .status.capacity }}
      {{ YAML . 1 }}
      {{ else }}
        cpu: 1k
        memory: 1Ti
        pods: 1M
      {{ end }}
      {{ $kwokVersion := printf "kwok-%s" Version }}
      nodeInfo:
        architecture: amd64
        containerRuntimeVersion: {{ $kwokVersion }}
        kernelVersion: {{ $kwokVersion }}
        kubeProxyVersion: {{ $kwokVersion }}
        kubeletVersion: {{ $kwokVersion }}
        operatingSystem: linux
      phase: Running
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Pending'
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'NotIn'
      values:
      - 'True'
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: ContainersReady
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}
      phase: Running
      startTime: {{ $now | Quote }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-delete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'Exists'
  next:
    delete: true
`

// kwokFinishStage ends the Running pods annotated KWOKFinishAnnotation=true after d.
func kwokFinishStage(d time.Duration) string {
	return fmt.Sprintf(`---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-finish
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.metadata.annotations["%s"]'
      operator: 'In'
      values:
      - 'true'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
  delay:
    durationMilliseconds: %d
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: PodCompleted
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: PodCompleted
        type: ContainersReady
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        state:
          terminated:
            exitCode: 0
            reason: Completed
            finishedAt: {{ $now | Quote }}
      {{ end }}
      phase: Succeeded
`, KWOKFinishAnnotation, d.Milliseconds())
}

// StartKWOK runs KWOK against the API server as the kubelet of every Node annotated
// KWOKNodeAnnotation=KWOKNodeValue: such a Node is made Ready (its capacity and
// allocatable kept), pods bound to it go Running, and its pods being deleted are
// removed. Node leases are off (nothing here reads them; 2,000 leases renewed every
// 10 s would be a load of their own). Stop it with StopProgram("kwok").
func (e *Env) StartKWOK() error { return e.StartKWOKWith(KWOKOptions{}) }

// KWOKOptions change what StartKWOKWith's KWOK plays.
type KWOKOptions struct {
	// FinishAfter, when positive, ends every Running pod annotated
	// KWOKFinishAnnotation=true this long after KWOK made it Running (phase Succeeded,
	// its containers terminated with exit code 0), so its GPUs are free again; other
	// pods stay Running.
	FinishAfter time.Duration
	// Parallelism, when positive, is how many pod stages KWOK plays at once (its
	// podPlayStageParallelism, 4 by default): each is one status patch, so at the
	// default a run with ten thousands of pods to start and end waits on KWOK. (A
	// KwokConfiguration in the file is taken without KWOK's defaults, so the other
	// parallelisms are given too, at those defaults.)
	Parallelism int
}

// KWOKFinishAnnotation (value "true") marks the pods KWOKOptions.FinishAfter ends.
const KWOKFinishAnnotation = "kwok.gantry.dev/finish"

// StartKWOKWith is StartKWOK with options.
func (e *Env) StartKWOKWith(o KWOKOptions) error {
	bins, err := FindBenchBinaries()
	if err != nil {
		return err
	}
	text := kwokStages
	if o.FinishAfter > 0 {
		text += kwokFinishStage(o.FinishAfter)
	}
	if o.Parallelism > 0 {
		text += fmt.Sprintf(`---
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  podPlayStageParallelism: %d
  nodePlayStageParallelism: 4
  nodeLeaseParallelism: 4
  podsOnNodeSyncParallelism: 1
`, o.Parallelism)
	}
	stages := filepath.Join(e.dir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, []byte(text), 0o600); err != nil {
		return fmt.Errorf("kubeenv: kwok stages: %w", err)
	}
	p, err := startProcess(e.dir, "kwok", bins.KWOK, []string{
		"--kubeconfig=" + e.Kubeconfig,
		"--config=" + stages,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + KWOKNodeAnnotation + "=" + KWOKNodeValue,
		"--node-lease-duration-seconds=0",
	})
	if err != nil {
		return err
	}
	e.procs = append(e.procs, p)
	// A bad flag or stage fails within moments; surface it here, not as Nodes that
	// never become Ready.
	time.Sleep(500 * time.Millisecond)
	if !p.running() {
		return p.failure("failed to start")
	}
	return nil
}

// StopProgram stops a program Start, StartKWOK or StartScheduler started (by its
// name: "kwok", "kube-scheduler", ...), so the next step runs without it.
func (e *Env) StopProgram(name string) error {
	i, p := e.find(name)
	if p == nil {
		return fmt.Errorf("kubeenv: no program %q to stop", name)
	}
	p.stop(10 * time.Second)
	e.procs = append(e.procs[:i], e.procs[i+1:]...)
	return nil
}
