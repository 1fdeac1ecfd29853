package api

import (
	"crypto/sha1" //nolint:gosec // Kueue's name hash, not a security measure
	"encoding/hex"
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// Kueue's AdmissionChecks, of which Gantry runs one kind: the ProvisioningRequest check.
// A workload in a ClusterQueue with checks first reserves quota (QuotaReserved); each
// check then answers Pending, Ready, Retry or Rejected, and only once all are Ready is
// the workload placed and started. Retry hands the quota back and queues the workload
// again after a backoff; Rejected deactivates it.

// ProvisioningRequestControllerName is the controllerName of Kueue's ProvisioningRequest
// admission check, the only check controller Gantry implements.
const ProvisioningRequestControllerName = "kueue.x-k8s.io/provisioning-request"

// The provisioning classes of cluster-autoscaler's ProvisioningRequest API Gantry
// simulates.
const (
	// ProvisioningClassCheckCapacity asks whether the cluster holds the pods now; it adds
	// no nodes.
	ProvisioningClassCheckCapacity = "check-capacity.autoscaling.x-k8s.io"
	// ProvisioningClassAtomicScaleUp asks for nodes for all the pods at once, or none.
	ProvisioningClassAtomicScaleUp = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
)

// Annotations of a NodePool that make it autoscaled in the simulator: the simulated
// cluster-autoscaler adds nodes of the pool's shape to serve ProvisioningRequests.
const (
	// AnnotationAutoscaleMax is the most nodes the pool may have, those it starts with
	// included ("16"). A pool without it is never scaled up.
	AnnotationAutoscaleMax = "gantry.dev/autoscale-max"
	// AnnotationProvisionDelay is how long new nodes take to join once a request asks
	// for them ("5m"; default DefaultProvisionDelay).
	AnnotationProvisionDelay = "gantry.dev/provision-delay"
)

// DefaultProvisionDelay is the provision delay of an autoscaled pool that names none.
const DefaultProvisionDelay = 5 * time.Minute

// CheckState is the state of one admission check for one workload (Kueue's names).
type CheckState string

const (
	CheckPending  CheckState = "Pending"
	CheckReady    CheckState = "Ready"
	CheckRetry    CheckState = "Retry"
	CheckRejected CheckState = "Rejected"
)

// AdmissionCheck is Kueue's AdmissionCheck with the ProvisioningRequest controller: its
// parameters name a ProvisioningRequestConfig.
type AdmissionCheck struct {
	Meta
	ControllerName string
	// Config is the name of its ProvisioningRequestConfig.
	Config string
}

// ProvisioningRetry is a ProvisioningRequestConfig's retryStrategy: after the n-th
// failed request the workload waits BackoffBase·2^(n-1), at most BackoffMax; the
// request that fails after BackoffLimitCount retries rejects the workload.
type ProvisioningRetry struct {
	BackoffLimitCount int
	BackoffBase       time.Duration
	BackoffMax        time.Duration
}

// DefaultProvisioningRetry is Kueue's default retryStrategy (3 retries, 60s, 1800s).
func DefaultProvisioningRetry() ProvisioningRetry {
	return ProvisioningRetry{BackoffLimitCount: 3, BackoffBase: 60 * time.Second, BackoffMax: 1800 * time.Second}
}

// PodSetNodeSelectorUpdate is one podSetUpdates.nodeSelector entry: the key gets the
// value of the provisioning class detail named, once the request is provisioned.
type PodSetNodeSelectorUpdate struct {
	Key                              string
	ValueFromProvisioningClassDetail string
}

// ProvisioningRequestConfig is Kueue's ProvisioningRequestConfig.
type ProvisioningRequestConfig struct {
	Meta
	ClassName  string
	Parameters map[string]string
	// ManagedResources: only pod sets that request one of them go into the request;
	// empty means every pod set. A workload with no such pod set is Ready at once.
	ManagedResources []resources.Name
	Retry            ProvisioningRetry
	PodSetUpdates    []PodSetNodeSelectorUpdate
	// PodSetMergePolicy is IdenticalPodTemplates, IdenticalWorkloadSchedulingRequirements
	// or empty (no merging).
	PodSetMergePolicy string
}

// Manages reports whether a pod set requesting these resources goes into a request.
func (c ProvisioningRequestConfig) Manages(requests resources.Vector) bool {
	if len(c.ManagedResources) == 0 {
		return true
	}
	for _, r := range c.ManagedResources {
		if requests[r] > 0 {
			return true
		}
	}
	return false
}

// ClusterQueueCheck is one check a ClusterQueue requires; with OnFlavors it runs only
// for workloads assigned one of those flavors.
type ClusterQueueCheck struct {
	Name      string
	OnFlavors []string
	// Field is where the ClusterQueue names it (for messages).
	Field string
}

// AdmissionChecks are the checks and configs read, and what each ClusterQueue requires
// (names resolved: every check and config named exists).
type AdmissionChecks struct {
	Checks  []AdmissionCheck
	Configs []ProvisioningRequestConfig
	// ByClusterQueue lists each ClusterQueue's checks, in the order written.
	ByClusterQueue map[string][]ClusterQueueCheck
}

// Check returns the AdmissionCheck of that name.
func (a AdmissionChecks) Check(name string) (AdmissionCheck, bool) {
	for _, c := range a.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return AdmissionCheck{}, false
}

// Config returns the ProvisioningRequestConfig of that name.
func (a AdmissionChecks) Config(name string) (ProvisioningRequestConfig, bool) {
	for _, c := range a.Configs {
		if c.Name == name {
			return c, true
		}
	}
	return ProvisioningRequestConfig{}, false
}

// Any reports whether some ClusterQueue requires a check.
func (a AdmissionChecks) Any() bool {
	for _, cs := range a.ByClusterQueue {
		if len(cs) > 0 {
			return true
		}
	}
	return false
}

// AppliesTo reports whether check c runs for a workload assigned these flavors.
func (c ClusterQueueCheck) AppliesTo(flavors []string) bool {
	if len(c.OnFlavors) == 0 {
		return true
	}
	for _, f := range flavors {
		for _, o := range c.OnFlavors {
			if f == o {
				return true
			}
		}
	}
	return false
}

// Kueue's limits on the names it makes for requests and their pod templates: a longer
// name is cut and given a hash suffix.
const (
	objNameHashLength      = 5
	objNameMaxPrefixLength = 252 - objNameHashLength
)

// ProvisioningRequestName is the name Kueue gives a check's attempt-th
// ProvisioningRequest for a workload (attempts count from 1).
func ProvisioningRequestName(workload, check string, attempt int) string {
	return limitObjectName(fmt.Sprintf("%s-%s-%d", workload, check, attempt))
}

// ProvisioningPodTemplateName is the name of the PodTemplate Kueue makes for one pod
// set of a ProvisioningRequest.
func ProvisioningPodTemplateName(request, podSet string) string {
	return limitObjectName(fmt.Sprintf("ppt-%s-%s", request, podSet))
}

func limitObjectName(full string) string {
	if len(full) <= objNameMaxPrefixLength {
		return full
	}
	sum := sha1.Sum([]byte(full))
	return full[:objNameMaxPrefixLength] + "-" + hex.EncodeToString(sum[:])[:objNameHashLength]
}
