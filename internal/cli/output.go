package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// outputFormat is the value of `-o`, the one output vocabulary of every command that
// prints results: a table for people, json or yaml for machines. It is a pflag.Value,
// so a wrong value is refused while the flags are parsed, with the same message on
// every command.
type outputFormat string

const (
	outputTable outputFormat = "table"
	outputJSON  outputFormat = "json"
	outputYAML  outputFormat = "yaml"
)

// outputHelp is the flag help of `-o` on every command.
const outputHelp = "output format: table, json or yaml (text is a deprecated alias of table)"

// parseOutputFormat reads a `-o` value. "text" was validate's and bench's name for the
// table before the vocabulary was unified; it stays accepted so scripts keep working.
func parseOutputFormat(s string) (outputFormat, error) {
	switch s {
	case "table", "text":
		return outputTable, nil
	case "json":
		return outputJSON, nil
	case "yaml":
		return outputYAML, nil
	}
	return "", fmt.Errorf("%q is not an output format: want table, json or yaml", s)
}

// Set implements pflag.Value.
func (o *outputFormat) Set(s string) error {
	f, err := parseOutputFormat(s)
	if err != nil {
		return err
	}
	*o = f
	return nil
}

// String implements pflag.Value.
func (o *outputFormat) String() string { return string(*o) }

// Type implements pflag.Value; it names the argument in the help ("-o, --output format").
func (o *outputFormat) Type() string { return "format" }

// machine reports whether the format is for programs (json or yaml): such output is
// one document on stdout and nothing else there, whatever happens.
func (o outputFormat) machine() bool { return o == outputJSON || o == outputYAML }

// addOutputFlag registers `-o/--output` (default table) on cmd and returns where the
// parsed value lands. Every command that prints results calls it.
func addOutputFlag(cmd *cobra.Command) *outputFormat {
	o := outputTable
	cmd.Flags().VarP(&o, "output", "o", outputHelp)
	return &o
}

// writeOutput writes v as the machine document of format f: indented JSON, or YAML
// with the same field names (the YAML is rendered from the JSON, so the two never
// disagree). The table format has no generic rendering; asking for it is a bug.
func writeOutput(w io.Writer, f outputFormat, v any) error {
	switch f {
	case outputJSON:
		return writeJSON(w, v)
	case outputYAML:
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("output format %q has no document rendering", f)
}

// writeJSON writes v as indented JSON: the `-o json` of every command.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
