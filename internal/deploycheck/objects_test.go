package deploycheck

import (
	"fmt"
	"regexp"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// document is one YAML document of a file or rendered template.
type document struct {
	source string // file or template it came from
	text   string
}

var separator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// splitDocuments splits a multi-document YAML stream, dropping documents that hold only
// comments and blank lines.
func splitDocuments(source, text string) []document {
	var docs []document
	for _, part := range separator.Split(text, -1) {
		if hasContent(part) {
			docs = append(docs, document{source: source, text: part})
		}
	}
	return docs
}

func hasContent(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return true
		}
	}
	return false
}

// object is a decoded Kubernetes object.
type object struct {
	kind, name, namespace, source string
	obj                           any // *appsv1.DaemonSet, *rbacv1.ClusterRole, ...
}

// newObject returns an empty object of a kind the deployment may contain.
func newObject(kind string) (any, bool) {
	switch kind {
	case "Namespace":
		return &corev1.Namespace{}, true
	case "ServiceAccount":
		return &corev1.ServiceAccount{}, true
	case "Service":
		return &corev1.Service{}, true
	case "ConfigMap":
		return &corev1.ConfigMap{}, true
	case "Deployment":
		return &appsv1.Deployment{}, true
	case "DaemonSet":
		return &appsv1.DaemonSet{}, true
	case "ClusterRole":
		return &rbacv1.ClusterRole{}, true
	case "ClusterRoleBinding":
		return &rbacv1.ClusterRoleBinding{}, true
	case "Role":
		return &rbacv1.Role{}, true
	case "RoleBinding":
		return &rbacv1.RoleBinding{}, true
	case "CustomResourceDefinition":
		return &apiextv1.CustomResourceDefinition{}, true
	case "MutatingWebhookConfiguration":
		return &admissionregistrationv1.MutatingWebhookConfiguration{}, true
	case "ValidatingWebhookConfiguration":
		return &admissionregistrationv1.ValidatingWebhookConfiguration{}, true
	case "Certificate":
		return &certificate{}, true
	case "Issuer":
		return &issuer{}, true
	}
	return newMonitoringObject(kind)
}

// decode reads a document strictly (an unknown or misplaced field is an error) into its
// kind's type; it needs a kind, an apiVersion and a name.
func decode(d document) (object, error) {
	var tm struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ObjectMeta `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(d.text), &tm); err != nil {
		return object{}, fmt.Errorf("%s: %w", d.source, err)
	}
	o := object{kind: tm.Kind, name: tm.Metadata.Name, namespace: tm.Metadata.Namespace, source: d.source}
	if tm.APIVersion == "" || tm.Metadata.Name == "" {
		return o, fmt.Errorf("%s: %s %q: apiVersion and metadata.name are required", d.source, tm.Kind, o.name)
	}
	typed, ok := newObject(tm.Kind)
	if !ok {
		return o, fmt.Errorf("%s: %s %s: kind not expected in a deployment", d.source, tm.Kind, o.name)
	}
	if err := yaml.UnmarshalStrict([]byte(d.text), typed); err != nil {
		return o, fmt.Errorf("%s: %s %s: %w", d.source, tm.Kind, o.name, err)
	}
	o.obj = typed
	return o, nil
}

// objectSet indexes objects by kind and name.
type objectSet map[string]object

func (s objectSet) get(kind, name string) (object, bool) {
	o, ok := s[kind+"/"+name]
	return o, ok
}

func (s objectSet) ofKind(kind string) []object {
	var out []object
	for _, o := range s {
		if o.kind == kind {
			out = append(out, o)
		}
	}
	return out
}

// decodeAll decodes the documents into a set; a duplicate kind and name is an error.
func decodeAll(docs []document) (objectSet, []error) {
	set := objectSet{}
	var errs []error
	for _, d := range docs {
		o, err := decode(d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		key := o.kind + "/" + o.name
		if prev, dup := set[key]; dup {
			errs = append(errs, fmt.Errorf("%s: %s defined again (first in %s)", d.source, key, prev.source))
		}
		set[key] = o
	}
	return set, errs
}

func metav1LabelSelector(ds *appsv1.DaemonSet) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(ds.Spec.Selector)
}
