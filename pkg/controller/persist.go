package controller

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// The engine's scheduler keeps, between cycles, state that no Workload field holds:
// the preemptions disruption budgets count and the reservations whose ETA must not
// slip. The controller keeps both on the objects too (AnnotationPreemptionHistory,
// AnnotationReservation) so a restarted controller or a new leader restores them
// (restore.go). Values are JSON: they are a record for Gantry, not a user interface.

// maxHistoryRecords bounds AnnotationPreemptionHistory: disruption budget windows are
// hours, and a workload preempted more often than this within one is budgeted by the
// newest records anyway.
const maxHistoryRecords = 16

// historyRecord is one preemption as AnnotationPreemptionHistory keeps it.
type historyRecord struct {
	At       time.Time          `json:"at"`
	Queue    string             `json:"queue"`
	GPUMilli resources.MilliGPU `json:"gpuMilli"`
}

// parseHistory reads a workload's preemption records. An unreadable value counts as
// none: it is a record of the past, and losing it at worst lets a budget allow more.
func parseHistory(id api.WorkloadID, s string) []placement.PreemptionRecord {
	if s == "" {
		return nil
	}
	var recs []historyRecord
	if json.Unmarshal([]byte(s), &recs) != nil {
		return nil
	}
	out := make([]placement.PreemptionRecord, len(recs))
	for i, r := range recs {
		out[i] = placement.PreemptionRecord{Workload: id, Queue: r.Queue, At: r.At, GPUMilli: r.GPUMilli}
	}
	return out
}

// appendHistory is the annotation value with rec added, the oldest dropped beyond
// maxHistoryRecords.
func appendHistory(s string, rec placement.PreemptionRecord) string {
	var recs []historyRecord
	if s != "" && json.Unmarshal([]byte(s), &recs) != nil {
		recs = nil // unreadable: start over rather than keep garbage
	}
	recs = append(recs, historyRecord{At: rec.At.UTC(), Queue: rec.Queue, GPUMilli: rec.GPUMilli})
	if len(recs) > maxHistoryRecords {
		recs = recs[len(recs)-maxHistoryRecords:]
	}
	b, _ := json.Marshal(recs) // plain structs: cannot fail
	return string(b)
}

// reservationRecord is a reservation as AnnotationReservation keeps it: the planned
// pods by node and device ID (the requests are the pod sets' own).
type reservationRecord struct {
	ETA   time.Time        `json:"eta"`
	Pods  []reservedPod    `json:"pods"`
	Waits []api.WorkloadID `json:"waits,omitempty"`
}

type reservedPod struct {
	PodSet  string   `json:"podSet"`
	Index   int      `json:"index"`
	Node    string   `json:"node"`
	Devices []string `json:"devices,omitempty"`
}

// formatReservation is the annotation value of r.
func formatReservation(r plan.Reservation) string {
	rec := reservationRecord{ETA: r.ETA.UTC(), Waits: r.Waits, Pods: make([]reservedPod, len(r.Pods))}
	for i, p := range r.Pods {
		rec.Pods[i] = reservedPod{PodSet: p.Ref.PodSet, Index: p.Ref.Index, Node: p.Node, Devices: p.Devices.IDs()}
	}
	b, _ := json.Marshal(rec) // plain structs: cannot fail
	return string(b)
}

// parseReservation rebuilds the reservation of model from the annotation value, on the
// nodes of w. A pod on a node that is gone or a device the node does not have makes it
// an error: the engine then plans afresh.
func parseReservation(s string, model *api.Workload, w *world) (plan.Reservation, error) {
	var rec reservationRecord
	if err := json.Unmarshal([]byte(s), &rec); err != nil {
		return plan.Reservation{}, fmt.Errorf("workload %s: metadata.annotations[%s]: %w", model.ID(), AnnotationReservation, err)
	}
	requests := map[string]resources.Vector{}
	for _, ps := range model.PodSets {
		requests[ps.Name] = ps.Requests
	}
	r := plan.Reservation{Workload: model.ID(), ETA: rec.ETA, Waits: rec.Waits}
	nodes := map[string]bool{}
	for _, p := range rec.Pods {
		i, ok := w.nodeIndex[p.Node]
		if !ok {
			return plan.Reservation{}, fmt.Errorf("workload %s: reservation on unknown node %s", model.ID(), p.Node)
		}
		a, err := devices.AssignmentFromIDs(w.nodes[i].Devices, p.Devices)
		if err != nil {
			return plan.Reservation{}, fmt.Errorf("workload %s: reservation on node %s: %w", model.ID(), p.Node, err)
		}
		r.Pods = append(r.Pods, cluster.BoundPod{Ref: cluster.PodRef{Workload: model.ID(), PodSet: p.PodSet, Index: p.Index},
			Node: p.Node, Requests: requests[p.PodSet], Devices: a})
		nodes[p.Node] = true
	}
	for n := range nodes {
		r.Nodes = append(r.Nodes, n)
	}
	sort.Strings(r.Nodes)
	return r, nil
}
