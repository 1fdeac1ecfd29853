package cli

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/manifest"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func newConvertCommand() *cobra.Command {
	var files []string
	cmd := &cobra.Command{
		Use:   "convert -f PATH...",
		Short: "Rewrite Kueue and Volcano queue objects as gantry.dev/v1alpha1 objects",
		Long: `Rewrite the kueue.x-k8s.io queue kinds (ResourceFlavor, ClusterQueue, LocalQueue, Cohort,
WorkloadPriorityClass, Topology) under gantry.dev/v1alpha1 (same fields), and each Volcano
Queue as a ClusterQueue in cohort "volcano" (deserved -> nominalQuota, capability -> the
borrowing limit above it, weight -> fair-sharing weight) plus one ResourceFlavor
"default-flavor". Other documents are copied unchanged.

-f takes files, folders (recursively, *.yaml/*.yml/*.json) or - for stdin, and may be
given more than once: every input is converted, in the order given, into one stream on
stdout. A problem in any input prints every problem on stderr and nothing on stdout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return fmt.Errorf("no input: give manifests with -f PATH (a file, a folder or - for stdin)")
			}
			inputs, problems := manifest.ReadInputs(files, cmd.InOrStdin())
			problems = append(problems, manifest.EmptyInputs(inputs)...)
			var c converter
			for _, in := range inputs {
				for _, f := range in.Files {
					c.file(f.Name, f.Data)
				}
			}
			problems = append(problems, c.problems...)
			if len(problems) > 0 {
				return reportLoadErrors(cmd.ErrOrStderr(), problems)
			}
			out, err := c.finish()
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "manifest file, folder or - for stdin (repeatable; --file is an older name for it)")
	// --file was convert's only flag name before -f meant --filename everywhere;
	// normalising it onto --filename keeps scripts working, and repeated -f/--file
	// append to one list instead of the second flag replacing the first.
	cmd.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "file" {
			name = "filename"
		}
		return pflag.NormalizedName(name)
	})
	return cmd
}

// typeHeader is the part of a document that says what it is.
type typeHeader struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// name is "namespace/name" or "name", as in every other error of the project.
func (h typeHeader) name() string {
	if h.Metadata.Namespace != "" {
		return h.Metadata.Namespace + "/" + h.Metadata.Name
	}
	return h.Metadata.Name
}

// kueueObject returns an empty Gantry object for a Kueue queue kind, or nil when the
// kind is not one Gantry mirrors.
func kueueObject(kind string) any {
	switch kind {
	case "ResourceFlavor":
		return &v1alpha1.ResourceFlavor{}
	case "ClusterQueue":
		return &v1alpha1.ClusterQueue{}
	case "LocalQueue":
		return &v1alpha1.LocalQueue{}
	case "Cohort":
		return &v1alpha1.Cohort{}
	case "WorkloadPriorityClass":
		return &v1alpha1.WorkloadPriorityClass{}
	case "Topology":
		return &v1alpha1.Topology{}
	}
	return nil
}

// ConvertManifests rewrites one multi-document YAML stream. Errors name the file, the
// document's first line, and the kind and name.
func ConvertManifests(name string, data []byte) ([]byte, error) {
	var c converter
	c.file(name, data)
	if len(c.problems) > 0 {
		return nil, c.problems
	}
	return c.finish()
}

// converter rewrites the documents of any number of files into one stream. It keeps
// going past a bad document so that one run reports every problem of every file.
type converter struct {
	out bytes.Buffer
	// flavorNeeded is set by a Volcano queue: the stream then ends with the one
	// ResourceFlavor all converted queues name, however many files held queues.
	flavorNeeded bool
	problems     manifest.ErrorList
}

// file converts every document of one file.
func (c *converter) file(name string, data []byte) {
	for _, d := range splitDocs(data) {
		c.document(name, d)
	}
}

// document converts one document, or records why it cannot.
func (c *converter) document(file string, d doc) {
	var h typeHeader
	if err := yaml.Unmarshal(d.text, &h); err != nil {
		c.problems = append(c.problems, &manifest.Error{Source: api.Source{File: file, Line: d.line}, Msg: err.Error()})
		return
	}
	group, _, _ := strings.Cut(h.APIVersion, "/")
	var conv []byte
	var err error
	switch {
	case group == "kueue.x-k8s.io" && kueueObject(h.Kind) != nil:
		conv, err = convertKueue(d.text, h.Kind)
	case group == "scheduling.volcano.sh" && h.Kind == "Queue":
		conv, err = convertVolcanoQueue(d.text)
		c.flavorNeeded = true
	default:
		conv = d.text
	}
	if err != nil {
		c.problems = append(c.problems, &manifest.Error{Source: api.Source{File: file, Line: d.line}, Kind: h.Kind, Name: h.name(), Msg: err.Error()})
		return
	}
	if len(bytes.TrimSpace(conv)) == 0 {
		return
	}
	c.out.WriteString("---\n")
	c.out.Write(bytes.TrimRight(conv, "\n"))
	c.out.WriteString("\n")
}

// finish returns the stream, closed by the Volcano flavor when a queue needs it.
func (c *converter) finish() ([]byte, error) {
	if c.flavorNeeded {
		fl := &v1alpha1.ResourceFlavor{TypeMeta: gantryType("ResourceFlavor"), ObjectMeta: metav1.ObjectMeta{Name: volcanoFlavor}}
		b, err := yaml.Marshal(fl)
		if err != nil {
			return nil, err
		}
		c.out.WriteString("---\n")
		c.out.Write(b)
		c.flavorNeeded = false
	}
	return c.out.Bytes(), nil
}

func gantryType(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: kind}
}

// convertKueue re-reads a Kueue object strictly into Gantry's type (so a field Gantry
// does not know is an error, not silently dropped) and writes it under gantry.dev.
func convertKueue(doc []byte, kind string) ([]byte, error) {
	obj := kueueObject(kind)
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return nil, err
	}
	tm := gantryType(kind)
	switch o := obj.(type) {
	case *v1alpha1.ResourceFlavor:
		o.TypeMeta = tm
	case *v1alpha1.ClusterQueue:
		o.TypeMeta = tm
	case *v1alpha1.LocalQueue:
		o.TypeMeta = tm
	case *v1alpha1.Cohort:
		o.TypeMeta = tm
	case *v1alpha1.WorkloadPriorityClass:
		o.TypeMeta = tm
	case *v1alpha1.Topology:
		o.TypeMeta = tm
	}
	return yaml.Marshal(obj)
}

const volcanoFlavor = "default-flavor"

// volcanoQueue is the part of scheduling.volcano.sh/v1beta1 Queue that converts.
type volcanoQueue struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		Weight      int32               `json:"weight,omitempty"`
		Capability  corev1.ResourceList `json:"capability,omitempty"`
		Deserved    corev1.ResourceList `json:"deserved,omitempty"`
		Reclaimable *bool               `json:"reclaimable,omitempty"`
		Guarantee   struct {
			Resource corev1.ResourceList `json:"resource,omitempty"`
		} `json:"guarantee,omitempty"`
	} `json:"spec"`
}

// convertVolcanoQueue maps a Volcano Queue onto a ClusterQueue: what the queue
// deserves (else its guarantee, else its capability) is nominal quota; capability
// above that is borrowable from the shared cohort; a reclaimable queue's loans can be
// reclaimed.
func convertVolcanoQueue(doc []byte) ([]byte, error) {
	var q volcanoQueue
	if err := yaml.Unmarshal(doc, &q); err != nil {
		return nil, err
	}
	names := map[corev1.ResourceName]bool{}
	for _, l := range []corev1.ResourceList{q.Spec.Capability, q.Spec.Deserved, q.Spec.Guarantee.Resource} {
		for n := range l {
			names[n] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, string(n))
	}
	sort.Strings(sorted)
	fq := v1alpha1.FlavorQuotas{Name: volcanoFlavor}
	rg := v1alpha1.ResourceGroup{}
	for _, s := range sorted {
		n := corev1.ResourceName(s)
		nominal, ok := q.Spec.Deserved[n]
		if !ok {
			if nominal, ok = q.Spec.Guarantee.Resource[n]; !ok {
				nominal = q.Spec.Capability[n]
			}
		}
		rq := v1alpha1.ResourceQuota{Name: n, NominalQuota: nominal.DeepCopy()}
		if c, ok := q.Spec.Capability[n]; ok && c.Cmp(nominal) >= 0 {
			b := c.DeepCopy()
			b.Sub(nominal)
			rq.BorrowingLimit = &b
		}
		rg.CoveredResources = append(rg.CoveredResources, n)
		fq.Resources = append(fq.Resources, rq)
	}
	cq := &v1alpha1.ClusterQueue{TypeMeta: gantryType("ClusterQueue"),
		ObjectMeta: metav1.ObjectMeta{Name: q.Metadata.Name, Labels: q.Metadata.Labels},
		Spec:       v1alpha1.ClusterQueueSpec{Cohort: "volcano"}}
	if len(fq.Resources) > 0 {
		rg.Flavors = []v1alpha1.FlavorQuotas{fq}
		cq.Spec.ResourceGroups = []v1alpha1.ResourceGroup{rg}
	}
	if q.Spec.Weight > 0 {
		w := resource.NewQuantity(int64(q.Spec.Weight), resource.DecimalSI)
		cq.Spec.FairSharing = &v1alpha1.FairSharing{Weight: w}
	}
	reclaim := v1alpha1.PreemptionPolicy("Any")
	if q.Spec.Reclaimable != nil && !*q.Spec.Reclaimable {
		reclaim = "Never"
	}
	cq.Spec.Preemption = &v1alpha1.ClusterQueuePreemption{ReclaimWithinCohort: reclaim, WithinClusterQueue: "LowerPriority"}
	return yaml.Marshal(cq)
}

// doc is one YAML document and the line it starts on.
type doc struct {
	text []byte
	line int
}

// splitDocs splits a stream at "---" lines, dropping empty documents.
func splitDocs(data []byte) []doc {
	var out []doc
	var cur bytes.Buffer
	start, line := 1, 0
	flush := func(next int) {
		if len(bytes.TrimSpace(cur.Bytes())) > 0 {
			out = append(out, doc{text: append([]byte(nil), cur.Bytes()...), line: start})
		}
		cur.Reset()
		start = next
	}
	for _, l := range strings.SplitAfter(string(data), "\n") {
		line++
		if strings.TrimRight(l, " \t\r\n") == "---" {
			flush(line + 1)
			continue
		}
		cur.WriteString(l)
	}
	flush(line)
	return out
}
