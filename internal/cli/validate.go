package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/manifest"
	"github.com/spf13/cobra"
)

// newValidateCommand builds `gantry validate -f PATH... [-o table|json|yaml]`: load
// every manifest, print what was understood, or every problem found (and exit non-zero).
func newValidateCommand() *cobra.Command {
	var files []string
	var strict bool
	var output *outputFormat
	cmd := &cobra.Command{
		Use:   "validate -f PATH...",
		Short: "Load manifests and print a summary of the cluster, queues and workloads, or every error",
		Long: "validate reads files, folders (recursively, *.yaml/*.yml/*.json) or - for stdin, and checks\n" +
			"every object and every reference between them. On success it prints nodes and GPUs by\n" +
			"pool, flavors, the cohort tree with quotas, local queues, workloads by queue and events.\n" +
			"On failure it prints every problem as file:line: Kind name: field: message on stderr.\n" +
			"A file given with -f that holds no object, or a folder none of whose files does, is a problem.\n\n" +
			"With -o json or -o yaml, stdout gets one document whether or not the input is valid:\n" +
			"valid (true or false), the summary fields when valid, and problems (file, line, kind,\n" +
			"name, field, message; empty when valid). The exit status is non-zero when invalid.\n\n" +
			"Kinds read:\n  " + strings.Join(manifest.SupportedKinds(), "\n  "),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return fmt.Errorf("no input: give manifests with -f PATH (a file, a folder or - for stdin)")
			}
			return validateAndPrint(cmd, files, strict, *output)
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "manifest file, folder or - for stdin (repeatable)")
	cmd.Flags().BoolVar(&strict, "strict", false, strictHelp)
	output = addOutputFlag(cmd)
	return cmd
}

// validateAndPrint loads the inputs and prints the summary or the problems in format out.
func validateAndPrint(cmd *cobra.Command, files []string, strict bool, out outputFormat) error {
	problems, objs, err := loadForValidate(files, cmd.InOrStdin())
	if err != nil {
		return err
	}
	if strict {
		problems = append(problems, skippedProblems(objs)...)
		sortProblems(problems)
	} else if !out.machine() {
		warnSkipped(cmd.ErrOrStderr(), objs)
	}
	if len(problems) == 0 {
		// Only on input that loads: a request no node of the cluster could ever hold.
		never, err := NeverFits(objs)
		if err != nil {
			return err
		}
		for _, n := range never {
			problems = append(problems, n.problem())
		}
	}
	if len(problems) > 0 {
		return reportProblems(cmd.OutOrStdout(), cmd.ErrOrStderr(), out, problems)
	}
	sum, err := summarize(objs)
	if err != nil {
		return err
	}
	if out.machine() {
		return writeOutput(cmd.OutOrStdout(), out, validateResult{Valid: true, validateSummary: &sum, Problems: []validateProblem{}})
	}
	return printSummary(cmd.OutOrStdout(), sum)
}

// loadForValidate loads the manifests and returns every problem (the loader reports
// inputs that hold no object too). err is only for failures that are not about the
// input.
func loadForValidate(files []string, stdin io.Reader) (manifest.ErrorList, *api.Objects, error) {
	objs, err := manifest.Load(files, stdin)
	var problems manifest.ErrorList
	if err != nil {
		list, ok := err.(manifest.ErrorList)
		if !ok {
			return nil, nil, err
		}
		problems = list
	}
	sortProblems(problems)
	return problems, objs, nil
}

// sortProblems orders problems by file then line, keeping the loader's order otherwise.
func sortProblems(l manifest.ErrorList) {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Source, l[j].Source
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
}

// reportProblems prints the problems (a document on stdout for json/yaml, one line
// each on stderr for the table) and returns the command's error.
func reportProblems(stdout, stderr io.Writer, out outputFormat, problems manifest.ErrorList) error {
	if !out.machine() {
		return reportLoadErrors(stderr, problems)
	}
	if err := writeOutput(stdout, out, validateResult{Valid: false, Problems: problemsOf(problems)}); err != nil {
		return err
	}
	return problemCount(len(problems))
}

// reportLoadErrors prints each problem on its own line and returns the command's error.
func reportLoadErrors(w io.Writer, err error) error {
	list, ok := err.(manifest.ErrorList)
	if !ok {
		return err
	}
	for _, e := range list {
		fmt.Fprintln(w, e.Error())
	}
	return problemCount(len(list))
}

// problemCount is the error a command returns after it printed n problems.
func problemCount(n int) error {
	noun := "problems"
	if n == 1 {
		noun = "problem"
	}
	return fmt.Errorf("%d %s found", n, noun)
}
