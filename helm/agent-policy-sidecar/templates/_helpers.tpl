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

{{/* Metadata labels plus user labels for one object: (list $ .Values.x.labels). */}}
{{- define "agent-policy-sidecar.objectLabels" -}}
{{- $root := index . 0 -}}
{{ include "agent-policy-sidecar.labels" $root }}
{{- with index . 1 }}
{{ toYaml . }}
{{- end -}}
{{- end -}}

{{/*
"true" when the recipe renders a native sidecar (an initContainer with restartPolicy
Always, Kubernetes >= 1.29), "" for a plain container. sidecar.native: auto | true | false.
*/}}
{{- define "agent-policy-sidecar.native" -}}
{{- $native := toString .Values.sidecar.native -}}
{{- if eq $native "auto" -}}
{{- if semverCompare ">=1.29.0-0" .Capabilities.KubeVersion.Version -}}true{{- end -}}
{{- else if eq $native "true" -}}
true
{{- end -}}
{{- end -}}

{{/* The address the agent dials in sidecar mode. */}}
{{- define "agent-policy-sidecar.address" -}}
127.0.0.1:{{ .Values.grpc.port }}
{{- end -}}

{{/*
Labels an agent's pod carries in sidecar mode: the PodMonitor selects pods by them.
*/}}
{{- define "agent-policy-sidecar.podLabels" -}}
agent-policy-sidecar/instance: {{ include "agent-policy-sidecar.fullname" . }}
{{- end -}}

{{/* Container port names: sidecar mode shares the pod with the agent's own ports. */}}
{{- define "agent-policy-sidecar.healthPortName" -}}
{{- if eq .Values.mode "sidecar" }}policy-health{{ else }}health{{ end -}}
{{- end -}}
{{- define "agent-policy-sidecar.metricsPortName" -}}
{{- if eq .Values.mode "sidecar" }}policy-metrics{{ else }}metrics{{ end -}}
{{- end -}}

{{/*
The sidecar container, as a list item. Standalone pods and agents' pods use it alike;
in sidecar mode the API listens on loopback only and declares no port.
*/}}
{{- define "agent-policy-sidecar.containerSpec" -}}
{{- $sidecarMode := eq .Values.mode "sidecar" -}}
{{- $native := and $sidecarMode (eq (include "agent-policy-sidecar.native" .) "true") -}}
- name: policy-sidecar
  image: {{ include "agent-policy-sidecar.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  {{- if $native }}
  # A native sidecar: starts before the agent, stops after it.
  restartPolicy: Always
  {{- end }}
  args:
    - --policies=/etc/sidecar/policies
    - --policy-watch-seconds={{ if eq .Values.policies.reload "watch" }}{{ .Values.policies.watchSeconds }}{{ else }}0{{ end }}
    - --grace-seconds={{ .Values.drain.graceSeconds }}
    {{- with .Values.permissionMode }}
    - --mode={{ . }}
    {{- end }}
    {{- if not .Values.policies.includeBundled }}
    - --no-bundled-policies
    {{- end }}
    {{- if .Values.tls.existingSecret }}
    - --tls-cert=/etc/sidecar/tls/tls.crt
    - --tls-key=/etc/sidecar/tls/tls.key
    {{- if .Values.tls.clientAuth }}
    - --tls-client-ca=/etc/sidecar/tls/ca.crt
    {{- end }}
    {{- end }}
    {{- if .Values.state.postgres.existingSecret }}
    - --state-password-file=/etc/sidecar/state-password/{{ .Values.state.postgres.passwordKey }}
    {{- end }}
    {{- if ne .Values.state.unavailable "require_approval" }}
    - --state-unavailable={{ .Values.state.unavailable }}
    {{- end }}
    {{- if gt (int .Values.workers) 1 }}
    - --workers={{ .Values.workers }}
    {{- end }}
    {{- with .Values.extraArgs }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  env:
    - name: SIDECAR_LISTEN
      value: "{{ if $sidecarMode }}127.0.0.1{{ else }}0.0.0.0{{ end }}:{{ .Values.grpc.port }}"
    - name: SIDECAR_HEALTH_LISTEN
      value: "0.0.0.0:{{ .Values.health.port }}"
    - name: SIDECAR_METRICS_LISTEN
      value: "0.0.0.0:{{ .Values.metrics.port }}"
    - name: SIDECAR_STATE
      {{- if .Values.state.postgres.existingSecret }}
      valueFrom:
        secretKeyRef:
          name: {{ .Values.state.postgres.existingSecret }}
          key: {{ .Values.state.postgres.dsnKey }}
      {{- else }}
      value: /var/lib/sidecar/state.db
      {{- end }}
    - name: SIDECAR_LOG_FORMAT
      value: json
    {{- with .Values.extraEnv }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  ports:
    {{- if not $sidecarMode }}
    - name: grpc
      containerPort: {{ .Values.grpc.port }}
      protocol: TCP
    {{- end }}
    - name: {{ include "agent-policy-sidecar.healthPortName" . }}
      containerPort: {{ .Values.health.port }}
      protocol: TCP
    - name: {{ include "agent-policy-sidecar.metricsPortName" . }}
      containerPort: {{ .Values.metrics.port }}
      protocol: TCP
  # Every probe calls the health-only port: kubelet cannot reach a loopback API.
  startupProbe:
    grpc:
      port: {{ .Values.health.port }}
      service: sidecar.v1.PolicyService
    periodSeconds: 1
    failureThreshold: 120
  livenessProbe:
    grpc:
      port: {{ .Values.health.port }}
    periodSeconds: 10
    failureThreshold: 3
  readinessProbe:
    grpc:
      port: {{ .Values.health.port }}
      service: sidecar.v1.PolicyService
    periodSeconds: 5
  {{- if not $native }}
  lifecycle:
    preStop:
      exec:
        command: ["sleep", "{{ .Values.drain.preStopSleepSeconds }}"]
  {{- end }}
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
    {{- if .Values.state.postgres.existingSecret }}
    - name: policy-sidecar-state-password
      mountPath: /etc/sidecar/state-password
      readOnly: true
    {{- end }}
    {{- if .Values.tls.existingSecret }}
    - name: policy-sidecar-tls
      mountPath: /etc/sidecar/tls
      readOnly: true
    {{- end }}
    {{- with .Values.extraVolumeMounts }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}

{{/*
For an agent chart (sidecar mode). In the pod template:
  initContainers:  {{ include "agent-policy-sidecar.initContainers" $sidecar }}  (native)
  containers:      {{ include "agent-policy-sidecar.containers" $sidecar }}      (plain)
Each renders the sidecar or nothing, by sidecar.native and the cluster version; the
README's recipe wraps initContainers in `with` so that nothing renders as null.
*/}}
{{- define "agent-policy-sidecar.initContainers" -}}
{{- if eq (include "agent-policy-sidecar.native" .) "true" -}}
{{- include "agent-policy-sidecar.containerSpec" . -}}
{{- end -}}
{{- end -}}

{{- define "agent-policy-sidecar.containers" -}}
{{- if ne (include "agent-policy-sidecar.native" .) "true" -}}
{{- include "agent-policy-sidecar.containerSpec" . -}}
{{- end -}}
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
{{- if .Values.state.postgres.existingSecret }}
- name: policy-sidecar-state-password
  secret:
    secretName: {{ .Values.state.postgres.existingSecret }}
    defaultMode: 0440  # the sidecar reads it through the pod's fsGroup
    items:
      - key: {{ .Values.state.postgres.passwordKey }}
        path: {{ .Values.state.postgres.passwordKey }}
{{- end }}
{{- if .Values.tls.existingSecret }}
- name: policy-sidecar-tls
  secret:
    secretName: {{ .Values.tls.existingSecret }}
{{- end }}
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "agent-policy-sidecar.policyChecksum" -}}
{{- toYaml .Values.policies.files | sha256sum -}}
{{- end -}}

{{/*
Pod annotations for an agent chart that includes the sidecar: with
policies.reload=restart, a policy edit changes the checksum and rolls the pods.
*/}}
{{- define "agent-policy-sidecar.podAnnotations" -}}
{{- if eq .Values.policies.reload "restart" -}}
checksum/policies: {{ include "agent-policy-sidecar.policyChecksum" . }}
{{- end -}}
{{- end -}}

{{/* The job label Prometheus gives the PodMonitor's targets: <namespace>/<name>. */}}
{{- define "agent-policy-sidecar.podMonitorJob" -}}
{{- printf "%s/%s" .Release.Namespace (include "agent-policy-sidecar.fullname" .) -}}
{{- end -}}

{{/*
The alerts' selector: the ServiceMonitor's job (the Service's name) or the PodMonitor's
(<namespace>/<name>), in this namespace. A raw PromQL string, so no escaping is lost.
*/}}
{{- define "agent-policy-sidecar.alertSelector" -}}
{{- $service := include "agent-policy-sidecar.fullname" . | regexQuoteMeta -}}
{{- $podMonitor := include "agent-policy-sidecar.podMonitorJob" . | regexQuoteMeta -}}
{{- printf "job=~`%s|%s`, namespace=`%s`" $service $podMonitor .Release.Namespace -}}
{{- end -}}

{{/* A dashboard uid per release and namespace (Grafana allows 40 characters). */}}
{{- define "agent-policy-sidecar.dashboardUid" -}}
{{- printf "%s/%s" .Release.Namespace (include "agent-policy-sidecar.fullname" .) | sha256sum | trunc 20 | printf "aps-%s" -}}
{{- end -}}

{{/*
Several standalone replicas must share one store: each pod's SQLite file would hold its
own sessions, answers, repetition counts and taint, and a load balancer spreads calls per
request. Refuse to render rather than run replicas that disagree.
*/}}
{{- define "agent-policy-sidecar.requireSharedStore" -}}
{{- $many := or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled -}}
{{- if and (eq .Values.mode "standalone") $many (not .Values.state.postgres.existingSecret) -}}
{{- fail "more than one replica (replicaCount > 1 or autoscaling.enabled) needs a shared store: set state.postgres.existingSecret to a Secret holding the PostgreSQL DSN and password. Each pod's own SQLite file would hold its own sessions, answers, repetition counts and taint, so replicas behind one Service would disagree (README: One pod, many pods)." -}}
{{- end -}}
{{- end -}}
