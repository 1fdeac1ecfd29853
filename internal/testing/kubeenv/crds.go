package kubeenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"k8s.io/client-go/discovery"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// InstallCRDs creates every CustomResourceDefinition in the YAML files of dir (one CRD
// per file, as controller-gen writes them) and waits until each is established.
func (e *Env) InstallCRDs(ctx context.Context, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		// A wrong directory (a test run from another working directory) would
		// otherwise install nothing and fail later with "no matches for kind".
		return fmt.Errorf("kubeenv: no CRD files (*.yaml) in %s", dir)
	}
	sort.Strings(files)
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("kubeenv: %w", err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return fmt.Errorf("kubeenv: %s: %w", f, err)
		}
		crds = append(crds, crd)
	}
	return e.CreateCRDs(ctx, crds...)
}

// CreateCRDs creates CRDs (an existing one is left as is) and waits until they are
// established and served.
func (e *Env) CreateCRDs(ctx context.Context, crds ...*apiextensionsv1.CustomResourceDefinition) error {
	cs, err := apiextensions.NewForConfig(e.Config)
	if err != nil {
		return fmt.Errorf("kubeenv: %w", err)
	}
	api := cs.ApiextensionsV1().CustomResourceDefinitions()
	for _, crd := range crds {
		if _, err := api.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("kubeenv: create CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range crds {
		for {
			got, err := api.Get(ctx, crd.Name, metav1.GetOptions{})
			if err == nil && established(got) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("kubeenv: CRD %s not established: %w", crd.Name, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return e.waitDiscovered(ctx, crds)
}

// waitDiscovered waits until discovery serves every CRD's kind: Established can come
// before the API server's discovery lists it, and a client's REST mapper asked in
// between answers "no matches for kind" (a flake under load).
func (e *Env) waitDiscovered(ctx context.Context, crds []*apiextensionsv1.CustomResourceDefinition) error {
	dc, err := discovery.NewDiscoveryClientForConfig(e.Config)
	if err != nil {
		return fmt.Errorf("kubeenv: %w", err)
	}
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			gv := crd.Spec.Group + "/" + v.Name
			for !ServesKind(dc, gv, crd.Spec.Names.Kind) {
				select {
				case <-ctx.Done():
					return fmt.Errorf("kubeenv: %s %s not in discovery: %w", gv, crd.Spec.Names.Kind, ctx.Err())
				case <-time.After(50 * time.Millisecond):
				}
			}
		}
	}
	return nil
}

// ServesKind reports whether discovery lists kind under groupVersion.
func ServesKind(dc discovery.DiscoveryInterface, groupVersion, kind string) bool {
	list, err := dc.ServerResourcesForGroupVersion(groupVersion)
	if err != nil {
		return false
	}
	for _, r := range list.APIResources {
		if r.Kind == kind {
			return true
		}
	}
	return false
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
