package deploycheck

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Prometheus operator's kinds (monitoring.coreos.com/v1), as far as the chart writes
// them: the operator's Go module is not a dependency, so these mirror its field names and
// the strict decoder refuses anything else the chart might write (a misspelt field would
// be dropped by the operator's API server, silently).

type prometheusRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Groups []ruleGroup `json:"groups"`
	} `json:"spec"`
}

type ruleGroup struct {
	Name     string `json:"name"`
	Interval string `json:"interval,omitempty"`
	Rules    []rule `json:"rules"`
}

type rule struct {
	Alert       string            `json:"alert,omitempty"`
	Record      string            `json:"record,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		JobLabel          string               `json:"jobLabel,omitempty"`
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector namespaceSelector    `json:"namespaceSelector,omitempty"`
		Endpoints         []scrapeEndpoint     `json:"endpoints"`
	} `json:"spec"`
}

type podMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		JobLabel            string               `json:"jobLabel,omitempty"`
		Selector            metav1.LabelSelector `json:"selector"`
		NamespaceSelector   namespaceSelector    `json:"namespaceSelector,omitempty"`
		PodMetricsEndpoints []scrapeEndpoint     `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

type namespaceSelector struct {
	Any        bool     `json:"any,omitempty"`
	MatchNames []string `json:"matchNames,omitempty"`
}

type scrapeEndpoint struct {
	Port            string       `json:"port"`
	Path            string       `json:"path,omitempty"`
	Interval        string       `json:"interval,omitempty"`
	Scheme          string       `json:"scheme,omitempty"`
	BearerTokenFile string       `json:"bearerTokenFile,omitempty"`
	TLSConfig       *tlsConfig   `json:"tlsConfig,omitempty"`
	Relabelings     []relabeling `json:"relabelings,omitempty"`
}

type tlsConfig struct {
	InsecureSkipVerify bool   `json:"insecureSkipVerify,omitempty"`
	ServerName         string `json:"serverName,omitempty"`
}

type relabeling struct {
	SourceLabels []string `json:"sourceLabels,omitempty"`
	TargetLabel  string   `json:"targetLabel,omitempty"`
	Regex        string   `json:"regex,omitempty"`
	Replacement  string   `json:"replacement,omitempty"`
	Action       string   `json:"action,omitempty"`
}

// newMonitoringObject returns an empty object of a Prometheus operator kind.
func newMonitoringObject(kind string) (any, bool) {
	switch kind {
	case "PrometheusRule":
		return &prometheusRule{}, true
	case "ServiceMonitor":
		return &serviceMonitor{}, true
	case "PodMonitor":
		return &podMonitor{}, true
	}
	return nil, false
}
