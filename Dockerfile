# syntax=docker/dockerfile:1
# The agent policy sidecar. Build: docker build -t agent-policy-sidecar:0.1.0 .
# (the Helm chart's default image). Runs as a non-root user with a read-only root file
# system: mount a writable volume at /var/lib/sidecar (state) and, optionally, policies
# at /etc/sidecar/policies. PYTHON_IMAGE may name any Python 3.11+ image with pip on PATH.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
# sidecar/bundled_policies links to ../policies, so both are copied.
COPY pyproject.toml README.md ./
COPY proto ./proto
COPY policies ./policies
COPY sidecar ./sidecar
# Wheels for the sidecar and every dependency; the final stage needs no compiler.
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="agent-policy-sidecar" \
      org.opencontainers.image.description="gRPC policy sidecar that inspects AI agents' tool calls before they run" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/agent-policy-sidecar/agent-policy-sidecar"
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links=/wheels "agent-policy-sidecar==${VERSION}" \
    && rm -rf /wheels \
    && useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin sidecar \
    && mkdir -p /var/lib/sidecar /etc/sidecar/policies \
    && chown sidecar:sidecar /var/lib/sidecar
# `docker run -p` needs the API on the container's network; the Helm chart sets every
# address itself (sidecar mode: the API on loopback only). Kubelet probes call the
# health-only port, Prometheus the metrics port.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    SIDECAR_LISTEN=0.0.0.0:50051 \
    SIDECAR_HEALTH_LISTEN=0.0.0.0:50052 \
    SIDECAR_METRICS_LISTEN=0.0.0.0:9464 \
    SIDECAR_STATE=/var/lib/sidecar/state.db
USER 10001:10001
WORKDIR /var/lib/sidecar
EXPOSE 50051 50052 9464
VOLUME ["/var/lib/sidecar"]
ENTRYPOINT ["sidecar", "serve"]
