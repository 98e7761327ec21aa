# tpindex: two commands set everything up on a fresh machine: `make index` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DB ?= db/tpindex.db
TAGS ?= v0.30.0..v0.32.0

.PHONY: install index test test-fast lint serve bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	$(BIN)/python -m compileall -q indexer  # bytecode, as a wheel install has it (PYTHONDONTWRITEBYTECODE)
	touch $(STAMP)

install: $(STAMP)

index: $(STAMP)
	$(BIN)/tpindex build --from-pypi --tree --tags '$(TAGS)' --db $(DB)
	$(BIN)/tpindex versions --db $(DB)
	@echo "Database: $(DB)   Browse it: make serve   Ask: $(BIN)/tpindex which NAME --db $(DB)"

# The whole suite (network, browser, crash trials), in parallel workers (pytest-xdist, one per CPU); a test
# module's tests stay in one worker (--dist loadfile), so its module fixtures are built once
XDIST := -n auto --dist loadfile
test: $(STAMP)
	$(BIN)/ruff check indexer tests
	$(BIN)/pytest $(XDIST)

# The edit-test loop: no network, no browser, no crash trials (make test and CI run everything)
test-fast: $(STAMP)
	$(BIN)/pytest $(XDIST) -m 'not network and not slow and not browser and not crash'

lint: $(STAMP)
	$(BIN)/ruff check indexer tests

serve: $(STAMP)
	$(BIN)/tpindex serve --db $(DB)

# A/B mode: every build and query figure also measured with tpindex at BENCH_BASE (a git revision), side by
# side; BENCH_BASE= (empty) measures the working tree alone
BENCH_BASE ?= 3bf2c40
bench: $(STAMP)
	$(BIN)/python tests/bench/bench.py $(if $(BENCH_BASE),--base $(BENCH_BASE)) $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build dist *.egg-info
