# Two entry points for a fresh machine: `make serve` and `make test`.
# Everything the tests need is installed here, from the package registries.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
BUF := proto/node_modules/.bin/buf
PROTO := proto/sidecar/v1/sidecar.proto
PYTEST_ARGS ?=

.PHONY: serve test venv dev lint format typecheck lint-proto generate unit clean bench eval policy-test

serve: venv  ## Install and start the sidecar with the bundled policies.
	$(BIN)/sidecar serve

test: dev lint-proto lint typecheck policy-test unit  ## Everything CI checks.

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

lint-proto: $(BUF)
	cd proto && node_modules/.bin/buf lint

lint: dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: dev
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

typecheck: dev
	$(BIN)/mypy sidecar tests bench

policy-test: dev  ## The bundled policy's own test suites (policies/tests).
	$(BIN)/sidecar check
	$(BIN)/sidecar test

unit: dev
	$(BIN)/pytest -q $(PYTEST_ARGS)

# The one way generated code is made; tests/test_generated_code.py fails when it is stale.
generate: dev
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m grpc_tools.protoc -Iproto \
	  --python_out=. --grpc_python_out=. --mypy_out=. --mypy_grpc_out=. $(PROTO)
	$(BIN)/sidecar schema > policies/schema/policy.schema.json

eval: dev  ## Detection quality on tests/data/eval, through a live server in mode auto.
	$(BIN)/python bench/eval.py

bench: dev  ## Speed, as ratios against baselines measured in the same run.
	$(BIN)/python bench/inspect_bench.py
	$(BIN)/python bench/project_bench.py

clean:
	rm -rf $(VENV) proto/node_modules .mypy_cache .ruff_cache .pytest_cache
