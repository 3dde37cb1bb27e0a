{{/* Names and labels. */}}
{{- define "agent-policy-sidecar.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "agent-policy-sidecar.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "agent-policy-sidecar.selectorLabels" -}}
app.kubernetes.io/name: {{ include "agent-policy-sidecar.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "agent-policy-sidecar.labels" -}}
{{ include "agent-policy-sidecar.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "agent-policy-sidecar.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/*
The sidecar container. Other charts include it in their pod spec:
  containers:
    - name: agent
      ...
    {{- include "agent-policy-sidecar.container" . | nindent 4 }}
  volumes:
    {{- include "agent-policy-sidecar.volumes" . | nindent 4 }}
with this chart's values under the same keys (see README "Helm").
*/}}
{{- define "agent-policy-sidecar.container" -}}
- name: policy-sidecar
  image: {{ include "agent-policy-sidecar.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args:
    - --policies=/etc/sidecar/policies
    - --policy-watch-seconds={{ if eq .Values.policies.reload "watch" }}{{ .Values.policies.watchSeconds }}{{ else }}0{{ end }}
    {{- with .Values.permissionMode }}
    - --mode={{ . }}
    {{- end }}
    {{- if not .Values.policies.includeBundled }}
    - --no-bundled-policies
    {{- end }}
  env:
    - name: SIDECAR_LISTEN
      value: "0.0.0.0:{{ .Values.grpc.port }}"
    - name: SIDECAR_METRICS_LISTEN
      value: "0.0.0.0:{{ .Values.metrics.port }}"
    - name: SIDECAR_STATE
      value: /var/lib/sidecar/state.db
    {{- with .Values.extraEnv }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  ports:
    - name: grpc
      containerPort: {{ .Values.grpc.port }}
      protocol: TCP
    - name: metrics
      containerPort: {{ .Values.metrics.port }}
      protocol: TCP
  livenessProbe:
    grpc:
      port: {{ .Values.grpc.port }}
    initialDelaySeconds: 5
    periodSeconds: 10
  readinessProbe:
    grpc:
      port: {{ .Values.grpc.port }}
      service: sidecar.v1.PolicyService
    periodSeconds: 5
  resources:
    {{- toYaml .Values.resources | nindent 4 }}
  securityContext:
    allowPrivilegeEscalation: false
    readOnlyRootFilesystem: true
    runAsNonRoot: true
    runAsUser: 10001
    runAsGroup: 10001
    capabilities:
      drop: [ALL]
    seccompProfile:
      type: RuntimeDefault
  volumeMounts:
    - name: policy-sidecar-policies
      mountPath: /etc/sidecar/policies
      readOnly: true
    - name: policy-sidecar-state
      mountPath: /var/lib/sidecar
{{- end -}}

{{- define "agent-policy-sidecar.volumes" -}}
- name: policy-sidecar-policies
  configMap:
    name: {{ include "agent-policy-sidecar.fullname" . }}-policies
- name: policy-sidecar-state
  {{- if .Values.state.existingClaim }}
  persistentVolumeClaim:
    claimName: {{ .Values.state.existingClaim }}
  {{- else }}
  emptyDir:
    sizeLimit: {{ .Values.state.sizeLimit }}
  {{- end }}
{{- end -}}

{{- define "agent-policy-sidecar.policyChecksum" -}}
{{- toYaml .Values.policies.files | sha256sum -}}
{{- end -}}

{{/*
Pod annotations for an agent chart that includes the container: with
policies.reload=restart, a policy edit changes the checksum and rolls the pods.
*/}}
{{- define "agent-policy-sidecar.podAnnotations" -}}
{{- if eq .Values.policies.reload "restart" -}}
checksum/policies: {{ include "agent-policy-sidecar.policyChecksum" . }}
{{- end -}}
{{- end -}}
