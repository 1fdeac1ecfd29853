package controller

import (
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
)

// The shared builders make pods and jobs for Gantry without importing this package
// (its internal tests use them): they must name the scheduler and gangs as it does.
func TestBuildersSpeakTheControllersNames(t *testing.T) {
	gang := k8s.MakePod("ns", "p").Gang("g", "2").PodGroup("v").Obj()
	if k8s.SchedulerName != SchedulerName || gang.Spec.SchedulerName != SchedulerName {
		t.Errorf("builders' scheduler %q (pod %q), want %q", k8s.SchedulerName, gang.Spec.SchedulerName, SchedulerName)
	}
	if gang.Annotations[AnnotationGang] != "g" || gang.Annotations[AnnotationGangSize] != "2" || gang.Annotations[AnnotationVolcanoGang] != "v" {
		t.Errorf("gang annotations %v, want %s=g, %s=2, %s=v", gang.Annotations, AnnotationGang, AnnotationGangSize, AnnotationVolcanoGang)
	}
}
