package cli

import (
	"bytes"
	"fmt"

	"github.com/gantry-sched/gantry/pkg/manifest"
	"sigs.k8s.io/yaml"
)

// volcanoQueues collects the Volcano Queue documents of a conversion and where each
// goes in the output stream.
type volcanoQueues struct {
	docs []manifest.VolcanoQueueDoc
	// nodes are the Node and NodePool documents of the inputs: the cluster whose
	// capacity a queue's weight shares (manifest.ConvertVolcanoQueuesWithNodes).
	nodes []manifest.VolcanoQueueDoc
	// at is, per document, the length of the stream when it was read: its place.
	at []int
	// converted is set once the queues are mapped (with no problem).
	converted *manifest.VolcanoConversion
}

func (v *volcanoQueues) add(file string, d doc, at int) {
	v.docs = append(v.docs, manifest.VolcanoQueueDoc{File: file, Line: d.line, Data: d.text})
	v.at = append(v.at, at)
	v.converted = nil
}

// addNode keeps a Node or NodePool document for the queues' weight shares (the
// document itself is copied to the output as it is).
func (v *volcanoQueues) addNode(file string, d doc) {
	v.nodes = append(v.nodes, manifest.VolcanoQueueDoc{File: file, Line: d.line, Data: d.text})
	v.converted = nil
}

// convertVolcanoQueues maps the Volcano queues read so far with the loader's mapping
// (manifest.ConvertVolcanoQueues) and returns their problems, each naming its file.
func (c *converter) convertVolcanoQueues() manifest.ErrorList {
	v := &c.volcano
	if v.converted != nil || len(v.docs) == 0 {
		return nil
	}
	conv, err := manifest.ConvertVolcanoQueuesWithNodes(v.docs, v.nodes)
	if list, ok := err.(manifest.ErrorList); ok {
		return list
	}
	if err != nil {
		return manifest.ErrorList{{Msg: err.Error()}}
	}
	v.converted = &conv
	return nil
}

// splice writes each converted queue into stream at its place and, with flavor, the
// ResourceFlavor they name at the end.
func (v *volcanoQueues) splice(stream []byte, flavor bool) ([]byte, error) {
	if v.converted == nil {
		return stream, nil
	}
	if len(v.converted.Queues) != len(v.docs) {
		return nil, fmt.Errorf("convert: %d Volcano queues read but %d converted", len(v.docs), len(v.converted.Queues))
	}
	var out bytes.Buffer
	prev := 0
	for i, q := range v.converted.Queues {
		out.Write(stream[prev:v.at[i]])
		prev = v.at[i]
		var obj any = q.ClusterQueue
		if q.Cohort != nil {
			obj = q.Cohort
		}
		if err := writeYAMLDoc(&out, obj); err != nil {
			return nil, err
		}
	}
	out.Write(stream[prev:])
	if flavor && v.converted.Flavor != nil {
		if err := writeYAMLDoc(&out, v.converted.Flavor); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}

// writeYAMLDoc appends obj as one document of a stream.
func writeYAMLDoc(out *bytes.Buffer, obj any) error {
	b, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	out.WriteString("---\n")
	out.Write(bytes.TrimRight(b, "\n"))
	out.WriteString("\n")
	return nil
}
