package deploycheck

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

const configDir = "../../config"

// kustomization is the part of kustomize's file this tree uses; reading it strictly
// makes any other field fail here, where the check below would not follow it.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace,omitempty"`
	Resources  []string `json:"resources"`
}

// kustomizeDocs follows dir's kustomization.yaml as kustomize does: a resource is a file
// of objects or a directory holding its own kustomization. It returns every document
// reached; each missing file, directory without a kustomization, or unreadable file is
// an error naming the kustomization and the entry.
func kustomizeDocs(dir string) ([]document, error) {
	file := filepath.Join(dir, "kustomization.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var k kustomization
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var docs []document
	for _, r := range k.Resources {
		p := filepath.Join(dir, r)
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: resource %s: %w", file, r, err)
		}
		more, err := resourceDocs(p, info.IsDir())
		if err != nil {
			return nil, fmt.Errorf("%s: resource %s: %w", file, r, err)
		}
		docs = append(docs, more...)
	}
	return docs, nil
}

func resourceDocs(p string, isDir bool) ([]document, error) {
	if isDir {
		if _, err := os.Stat(filepath.Join(p, "kustomization.yaml")); err != nil {
			return nil, errors.New("a directory resource needs a kustomization.yaml")
		}
		return kustomizeDocs(p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return splitDocuments(p, string(data)), nil
}

func TestKustomizeDefaultHoldsEverything(t *testing.T) {
	docs, err := kustomizeDocs(filepath.Join(configDir, "default"))
	if err != nil {
		t.Fatal(err)
	}
	set, errs := decodeAll(docs)
	for _, err := range errs {
		t.Error(err)
	}
	for _, want := range []string{
		"Namespace/gantry-system", "Deployment/gantry-controller", "ClusterRole/gantry-controller",
		"DaemonSet/gantry-node-agent", "ServiceAccount/gantry-node-agent", "ClusterRole/gantry-node-agent",
		"ClusterRoleBinding/gantry-node-agent", "CustomResourceDefinition/clusterqueues.gantry.dev",
	} {
		if _, ok := set[want]; !ok {
			t.Errorf("config/default lacks %s", want)
		}
	}
}

// TestKubectlKustomizeBuildsDefault runs the real kustomize (kubectl's) where it is
// installed, and decodes its output strictly.
func TestKubectlKustomizeBuildsDefault(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not installed:", err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", filepath.Join(configDir, "default"))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/default: %v\n%s", err, stderr.String())
	}
	set, errs := decodeAll(splitDocuments("kubectl kustomize config/default", string(out)))
	for _, err := range errs {
		t.Error(err)
	}
	for _, o := range set {
		if o.namespace != "" && o.namespace != "gantry-system" {
			t.Errorf("%s %s in namespace %s, want gantry-system", o.kind, o.name, o.namespace)
		}
	}
}
