package controller

import (
	"context"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The preemptor's record of its victims (AnnotationNominatedVictims) is what the
// simulator keeps as a workload's nominated list: kept on the object so it survives a
// controller restart, and cleared where the simulator clears it (the preemptor starts).

// parseNominated reads the annotation value; empty entries are skipped and repeats
// dropped, so a hand-edited value cannot make the engine see a victim twice.
func parseNominated(s string) []api.WorkloadID {
	var out []api.WorkloadID
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = appendUnique(out, api.WorkloadID(f))
		}
	}
	return out
}

// formatNominated is the annotation value for ids.
func formatNominated(ids []api.WorkloadID) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = string(id)
	}
	return strings.Join(parts, ",")
}

// appendUnique appends id unless ids holds it already (lists are short: a wait has at
// most a handful of victims).
func appendUnique(ids []api.WorkloadID, id api.WorkloadID) []api.WorkloadID {
	for _, x := range ids {
		if x == id {
			return ids
		}
	}
	return append(ids, id)
}

// recordNominated adds victims to the preemptor's record on the API server.
func recordNominated(ctx context.Context, c client.Client, obj *v1alpha1.Workload, victims []api.WorkloadID) error {
	have := parseNominated(obj.Annotations[AnnotationNominatedVictims])
	next := have
	for _, v := range victims {
		next = appendUnique(next, v)
	}
	if len(next) == len(have) {
		return nil
	}
	return patchWorkload(ctx, c, obj, func(wl *v1alpha1.Workload) {
		if wl.Annotations == nil {
			wl.Annotations = map[string]string{}
		}
		wl.Annotations[AnnotationNominatedVictims] = formatNominated(next)
	})
}

// clearWait removes the records of a pending workload's wait (its victims, its
// reservation): it was admitted.
func clearWait(ctx context.Context, c client.Client, obj *v1alpha1.Workload) error {
	_, victims := obj.Annotations[AnnotationNominatedVictims]
	_, reserved := obj.Annotations[AnnotationReservation]
	if !victims && !reserved {
		return nil
	}
	return patchWorkload(ctx, c, obj, func(wl *v1alpha1.Workload) {
		delete(wl.Annotations, AnnotationNominatedVictims)
		delete(wl.Annotations, AnnotationReservation)
	})
}

// recordReservation sets the workload's reservation record to value ("" removes it),
// writing only a change: a reservation kept from cycle to cycle is written once.
func recordReservation(ctx context.Context, c client.Client, obj *v1alpha1.Workload, value string) error {
	if obj.Annotations[AnnotationReservation] == value {
		return nil
	}
	return patchWorkload(ctx, c, obj, func(wl *v1alpha1.Workload) {
		if value == "" {
			delete(wl.Annotations, AnnotationReservation)
			return
		}
		if wl.Annotations == nil {
			wl.Annotations = map[string]string{}
		}
		wl.Annotations[AnnotationReservation] = value
	})
}
