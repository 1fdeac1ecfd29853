package manifest

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// upstreamModule is one upstream repository's module, at an exact version (the proxy
// refuses "latest" here, and an exact version keeps the corpus the same on every run),
// and the folders of it whose files are user-facing samples.
type upstreamModule struct {
	repo, path, version string
	dirs                []string
	// setup are files of the module (relative paths) that samples refer to, loaded with
	// every other file of the module, as a user applies a folder's queues before its jobs.
	setup []string
	// cluster is documents of our own loaded with every sample of the module: the nodes
	// of the cluster the samples run on, which Volcano's weight-only queues share.
	cluster string
	// refused are files that are wrong upstream, each with the text of the error it must
	// be refused with (an API server refuses them too); they count as refused, not loaded.
	refused map[string]string
	// declined are files an API server takes but Gantry refuses by a documented limit of
	// its own (docs/manifests.md), each with the text of the error; they count as
	// declined, so that the table shows what Gantry cannot read yet.
	declined map[string]string
}

// sampleFiles lists the manifest files under dir (recursively) that are samples a user
// applies: not kustomize files and not Helm templates, which are not manifests until
// rendered.
func sampleFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !isManifestFile(p) || strings.HasPrefix(d.Name(), "kustomization.") {
			return nil
		}
		if !helmTemplate(dir, p) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing %s: %v", dir, err)
	}
	sort.Strings(out)
	return out
}

// helmTemplate: the file lies in the templates folder of a Helm chart (a folder with a
// Chart.yaml) at or below root. Telling templates by "{{" instead would drop manifests
// whose string values hold another tool's placeholders (Argo Workflows' parameters).
func helmTemplate(root, file string) bool {
	for d := filepath.Dir(file); strings.HasPrefix(d, root); d = filepath.Dir(d) {
		if filepath.Base(d) != "templates" {
			continue
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(d), "Chart.yaml")); err == nil {
			return true
		}
	}
	return false
}

// unsupportedKind names the kind when the error is the loader's refusal of a kind it
// does not read at all (kinds.go lookupKind), as opposed to a problem in a kind it
// reads; "" otherwise.
func unsupportedKind(e *Error) string {
	if e.Field != "kind" {
		return ""
	}
	if k, ok := strings.CutPrefix(e.Msg, "unsupported apiVersion/kind "); ok {
		k, _, _ = strings.Cut(k, ";") // the hint, if any
		return k
	}
	if _, rest, ok := strings.Cut(e.Msg, " for apiVersion "); ok && strings.HasPrefix(e.Msg, "unknown kind ") {
		version, _, _ := strings.Cut(rest, ";")
		return version + " " + e.Kind
	}
	return ""
}

// corpusResult is what loading one repository's samples gave.
type corpusResult struct {
	files, loaded, refused, declined, workloads int
	unsupported                                 map[string]bool // "apiVersion kind"
}

func (r corpusResult) unsupportedKinds() string {
	var ks []string
	for k := range r.unsupported {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	if len(ks) == 0 {
		return "-"
	}
	return strings.Join(ks, ", ")
}
