{{- define "gantry.labels" -}}
app.kubernetes.io/name: gantry
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end -}}
{{- define "gantry.selector" -}}
app.kubernetes.io/name: gantry
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
{{- /* The node agent's pods must not match gantry.selector (the controller's Service). */ -}}
{{- define "gantry.nodeAgentLabels" -}}
{{ include "gantry.nodeAgentSelector" . }}
app.kubernetes.io/component: node-agent
app.kubernetes.io/part-of: gantry
{{- end -}}
{{- define "gantry.nodeAgentSelector" -}}
app.kubernetes.io/name: gantry-node-agent
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
{{- /* Labels of the monitoring objects (dashboard ConfigMap, Prometheus operator objects). */ -}}
{{- define "gantry.monitoringLabels" -}}
app.kubernetes.io/name: gantry
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: monitoring
{{- with .Values.prometheus.labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}
