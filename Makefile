# The two commands of the README. Both create the environment when it is missing or stale.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint setup clean

setup: $(STAMP)

# torch first and pinned: an unpinned torch pulls GBs of CUDA packages.
# constraints.txt pins every transitive dependency, so installs are reproducible and quick.
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/hqa build --samples
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/hqa info

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HQA_PROGRESS=0 $(BIN)/pytest -q

clean:
	rm -rf .state
