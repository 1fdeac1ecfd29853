package cli

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/manifest"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func newConvertCommand() *cobra.Command {
	var files []string
	cmd := &cobra.Command{
		Use:   "convert -f PATH...",
		Short: "Rewrite Kueue and Volcano queue objects as gantry.dev/v1alpha1 objects",
		Long: `Rewrite the kueue.x-k8s.io queue kinds (ResourceFlavor, ClusterQueue, LocalQueue, Cohort,
WorkloadPriorityClass, Topology; v1beta1 or v1beta2, read as validate reads them) under
gantry.dev/v1alpha1 (v1beta1's field names: v1beta2's cohortName becomes cohort), and each Volcano
Queue as the objects validate and simulate derive from it: a ClusterQueue (a Cohort when
another queue names it as parent) under cohort "root" (deserved -> nominalQuota,
capability -> the borrowing limit above it, guarantee -> the lending limit, weight ->
fair-sharing weight; a queue without deserved gets its weight's share of the capacity of
the Nodes and NodePools among the inputs, so give them with the queues) plus one
ResourceFlavor "volcano-default" (see docs/manifests.md).
Other documents are copied unchanged.

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
			problems = append(problems, c.convertVolcanoQueues()...)
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

// kueueKind reports whether kind is a Kueue queue kind Gantry mirrors; other
// kueue.x-k8s.io kinds (AdmissionCheck, ...) are copied unchanged.
func kueueKind(kind string) bool {
	switch kind {
	case "ResourceFlavor", "ClusterQueue", "LocalQueue", "Cohort", "WorkloadPriorityClass", "Topology":
		return true
	}
	return false
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
	// volcano holds the Volcano Queues, converted together once every file is read
	// (whether a queue is a ClusterQueue or a Cohort depends on the others) and written
	// at their places; the stream then ends with the one ResourceFlavor they all name.
	volcano volcanoQueues
	// volcanoFlavorGiven: the inputs define that flavor already.
	volcanoFlavorGiven bool
	problems           manifest.ErrorList
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
	if h.Kind == "ResourceFlavor" && h.Metadata.Name == manifest.VolcanoFlavor {
		c.volcanoFlavorGiven = true
	}
	var conv []byte
	var err error
	switch {
	case group == "kueue.x-k8s.io" && kueueKind(h.Kind):
		if conv, err = convertKueue(file, d, h.Kind); err != nil {
			c.kueueProblems(file, d.line, err) // each names file, line, object and field
			return
		}
	case group == "scheduling.volcano.sh" && h.Kind == "Queue":
		c.volcano.add(file, d, c.out.Len())
		return
	case (h.APIVersion == "v1" && h.Kind == "Node") || (group == "gantry.dev" && h.Kind == "NodePool"):
		c.volcano.addNode(file, d) // a weight-only Volcano queue's share is of these
		conv = d.text
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

// finish returns the stream: the Volcano queues converted at their places, closed by
// the Volcano flavor when queues need it and the inputs do not define it.
func (c *converter) finish() ([]byte, error) {
	if problems := c.convertVolcanoQueues(); len(problems) > 0 {
		return nil, problems
	}
	return c.volcano.splice(c.out.Bytes(), !c.volcanoFlavorGiven)
}

func gantryType(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: kind}
}

// convertKueue reads a Kueue object with the loader's own reader (each apiVersion's
// field names, strict decoding, the checks `validate` makes of one object), so convert
// and validate agree on every version, and writes it under gantry.dev. A v1beta2
// ClusterQueue's cohortName becomes cohort; flavorFungibility.preference, which the
// gantry.dev type lacks, rides on the gantry.dev/flavor-fungibility-preference
// annotation when it is PreemptionOverBorrowing (the default is left out).
func convertKueue(file string, d doc, kind string) ([]byte, error) {
	obj, err := manifest.ReadKueueObject(file, d.line, d.text)
	if err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(kind))
	return yaml.Marshal(obj)
}

// kueueProblems records the problems of the Kueue document at file:line.
func (c *converter) kueueProblems(file string, line int, err error) {
	if list, ok := err.(manifest.ErrorList); ok {
		c.problems = append(c.problems, list...)
		return
	}
	c.problems = append(c.problems, &manifest.Error{Source: api.Source{File: file, Line: line}, Msg: err.Error()})
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
