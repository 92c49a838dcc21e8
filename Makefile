# The front door. Every target installs what it needs first, so on a fresh clone
# `make test` and `make run` are the only two commands anyone has to know.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.installed
PROTO_STAMP := gen/.generated
PROTOS := $(shell find proto -name '*.proto' 2>/dev/null)
SITE = $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
DATA_DIR ?= data

.PHONY: all install proto lint fmt typecheck test test-fast bench run demo clean

all: test

$(STAMP): pyproject.toml constraints.txt
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) on PATH"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $@

install: $(STAMP) $(PROTO_STAMP)

# Generated code lives in gen/ (git-ignored), never edited: protobuf, gRPC and mypy stubs.
$(PROTO_STAMP): $(STAMP) $(PROTOS)
	rm -rf gen && mkdir -p gen
	PATH="$(abspath $(BIN)):$$PATH" $(PY) -m grpc_tools.protoc -I proto -I "$(SITE)" \
	  --python_out=gen --grpc_python_out=gen --mypy_out=gen --mypy_grpc_out=gen $(PROTOS)
	find gen -mindepth 1 -type d -exec touch {}/__init__.py \;
	touch $@

proto: $(PROTO_STAMP)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy libs services tests bench
	cd proto && ../$(BIN)/buf lint && ../$(BIN)/buf format --diff --exit-code
	@! grep -rnE '^\s*(import random|from random import)' services/rng libs/shuffle --include=*.py \
	  || { echo "services/rng must never use Python's random module"; exit 1; }

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

run: install
	$(BIN)/pokerctl up --data-dir $(DATA_DIR) --bots

demo: install
	$(BIN)/pokerctl demo --hands 200 --tables 3 --json

clean:
	rm -rf $(VENV) gen .mypy_cache .ruff_cache .pytest_cache .hypothesis
