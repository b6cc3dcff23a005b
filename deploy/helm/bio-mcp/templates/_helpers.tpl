{{/* The release's name for its objects, at most 63 characters. */}}
{{- define "bio-mcp.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "bio-mcp.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "bio-mcp.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "bio-mcp.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "bio-mcp.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* The Secret the pods read: the user's own, or the chart's. */}}
{{- define "bio-mcp.secretName" -}}
{{- .Values.existingSecret | default (include "bio-mcp.fullname" .) -}}
{{- end -}}

{{- define "bio-mcp.oauth" -}}
{{- if or .Values.auth.issuer .Values.auth.audience .Values.auth.resourceUrl -}}true{{- end -}}
{{- end -}}

{{/* The HS256 key: the one given, else the one an earlier install generated, else a new one. */}}
{{- define "bio-mcp.authSecretKey" -}}
{{- if .Values.auth.secretKey -}}
{{- .Values.auth.secretKey -}}
{{- else -}}
{{- $old := lookup "v1" "Secret" .Release.Namespace (include "bio-mcp.fullname" .) -}}
{{- if and $old (index ($old.data | default dict) "MCP_AUTH_SECRET_KEY") -}}
{{- index $old.data "MCP_AUTH_SECRET_KEY" | b64dec -}}
{{- else -}}
{{- randAlphaNum 48 -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The pod's environment: the ConfigMap, then the Secret (which wins on a shared name). */}}
{{- define "bio-mcp.envFrom" -}}
- configMapRef:
    name: {{ include "bio-mcp.fullname" . }}
- secretRef:
    name: {{ include "bio-mcp.secretName" . }}
{{- end -}}
