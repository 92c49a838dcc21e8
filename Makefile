# The front door. Every target installs what it needs first, so on a fresh clone
# `make test` and `make run` are the only two commands anyone has to know.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.installed
API := src/openpoker/api
PROTO_STAMP := $(API)/.generated
PROTOS := $(shell find proto -name '*.proto' 2>/dev/null)
SITE = $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
DATA_DIR ?= data
ENGINE_COMPILE ?= 1
ENGINE_HOT := hand hand_state hand_evolve hand_decide hand_queries betting pots showdown phh_replay hand_events hand_setup rules cards ranking phh table table_state table_decide table_queries codec
ENGINE_STAMP := $(VENV)/.engine-compiled
ENGINE_SOURCES := $(wildcard src/openpoker/engine/*.py)

.PHONY: all install engine-pure proto lint fmt typecheck test test-fast bench fuzz run demo clean

all: test

$(STAMP): pyproject.toml constraints.txt
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) on PATH"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $@

install: $(STAMP) $(PROTO_STAMP) $(if $(filter 0,$(ENGINE_COMPILE)),engine-pure,$(ENGINE_STAMP))

# The engine's hot modules compiled by mypyc (replays about 2.7x faster): each extension module
# sits next to its source (an extension wins the import) and is git-ignored. Rebuilt when ANY
# engine source changes, since a compiled module builds in what it knows of the others; tests
# refuse to run on a stale build (tests/conftest.py). ENGINE_COMPILE=0 removes it: pure Python.
$(ENGINE_STAMP): $(STAMP) $(ENGINE_SOURCES)
	rm -rf src/build src/*__mypyc*.so src/openpoker/engine/*.so
	cd src && ../$(BIN)/mypyc $(ENGINE_HOT:%=openpoker/engine/%.py) >../$(VENV)/mypyc.log 2>&1 \
	  || { cat ../$(VENV)/mypyc.log; exit 1; }
	rm -rf src/build  # C sources and a setup.py mypy would check; the modules are in place
	touch $@

engine-pure:
	rm -rf src/build src/*__mypyc*.so src/openpoker/engine/*.so $(ENGINE_STAMP)

# Generated code is the package openpoker.api (git-ignored), never edited: protobuf, gRPC and
# mypy stubs. The .proto files sit under proto/openpoker/api/ so their import paths are the
# Python package path; their protobuf packages (poker.<service>.v1) are the wire names.
$(PROTO_STAMP): $(STAMP) $(PROTOS)
	rm -rf $(API) && mkdir -p $(API)
	PATH="$(abspath $(BIN)):$$PATH" $(PY) -m grpc_tools.protoc -I proto -I "$(SITE)" \
	  --python_out=src --grpc_python_out=src --mypy_out=src --mypy_grpc_out=src $(PROTOS)
	find $(API) -type d -exec touch {}/__init__.py \;
	touch $@

proto: $(PROTO_STAMP)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy src tests bench
	$(BIN)/lint-imports --no-cache
	cd proto && ../$(BIN)/buf lint && ../$(BIN)/buf format --diff --exit-code
	@! grep -rnE '^\s*(import random|from random import)' src/openpoker/services/rng src/openpoker/shuffle \
	  --include=*.py || { echo "the rng and shuffle must never use Python's random module"; exit 1; }

fmt: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
	cd proto && ../$(BIN)/buf format -w

test: install
	$(BIN)/pytest -n 2 --dist loadfile

test-fast: install
	$(BIN)/pytest -n 2 --dist loadfile -m "not slow"

bench: install
	$(PY) -m bench

# The fuzzer of a running secure system at length (docs/testing.md#fuzzing); POKER_FUZZ_SEED
# repeats a run, FUZZ_CALLS sizes it.
FUZZ_CALLS ?= 20000
fuzz: install
	POKER_FUZZ_CALLS=$(FUZZ_CALLS) $(BIN)/pytest -s tests/security/test_fuzz_system.py

run: install
	$(BIN)/pokerctl up --data-dir $(DATA_DIR) --bots

demo: install
	$(BIN)/pokerctl demo --hands 200 --tables 3 --json

clean:
	rm -rf $(VENV) $(API) src/build src/*__mypyc*.so src/openpoker/engine/*.so .mypy_cache .ruff_cache .pytest_cache .hypothesis
