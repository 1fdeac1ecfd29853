package controller

import (
	"fmt"
	"reflect"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/manifest"
	corev1 "k8s.io/api/core/v1"
)

// claimsOfGangPod reads a gang pod's DRA claims (spec.resourceClaims and the containers'
// resources.claims) with the loader's own pod-spec reader, so a pod gang's claims are
// read as a Job's are.
func claimsOfGangPod(p *corev1.Pod) ([]api.PodClaim, error) {
	return manifest.PodClaimsOf(objectSource, p)
}

// gangClaims are the claims of a gang's pods, which must be alike (as their requests
// must): one pod set, one list of claims.
func gangClaims(g *podGang) ([]api.PodClaim, error) {
	first, err := claimsOfGangPod(g.live[0])
	if err != nil {
		return nil, err
	}
	for _, p := range g.live[1:] {
		c, err := claimsOfGangPod(p)
		if err != nil {
			return nil, err
		}
		if !reflect.DeepEqual(c, first) {
			return nil, fmt.Errorf("pod %s/%s: spec.resourceClaims: claims differ from pod %s of the same gang %s; a gang's pods must be alike",
				p.Namespace, p.Name, g.live[0].Name, g.name)
		}
	}
	return first, nil
}
