# Two commands do everything (see README):
#   make lab   set up .venv, build what is stale, open JupyterLab on index.ipynb
#   make test  set up .venv and run the whole test suite (what CI runs)
# Both are idempotent: a second run only checks stamps and starts at once.

SHELL := /bin/bash
# Python 3.11 (what CI runs), else the newest 3.13 or 3.12 found, else python3 (checked below).
PYTHON ?= $(shell command -v python3.11 || command -v python3.13 || command -v python3.12 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
KERNEL := $(VENV)/share/jupyter/kernels/causal-attention/kernel.json
PIP_VERSION := 26.3

.PHONY: lab test setup system-deps node-deps build build-all html lock bench clean catalogs new-language translation-status release mutation

# --allow-root only when run as root (containers, Binder-like machines).
lab: setup build
	$(VENV)/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) index.ipynb

test: setup system-deps node-deps
	$(PY) -m pytest $(PYTEST_ARGS)

setup: $(STAMP) $(KERNEL)

$(STAMP): requirements.txt requirements-lock.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if (3, 11) <= sys.version_info[:2] < (3, 14) else "Python 3.11, 3.12 or 3.13 is required, found " + sys.version.split()[0] + " ($(PYTHON)); run make PYTHON=/path/to/python3.1x")' 
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	# pip 23.2 (what a new venv brings) crashed on some installs here: upgrade it first.
	$(PY) -m pip install --quiet --upgrade "pip==$(PIP_VERSION)"
	$(PY) -m pip install --quiet -r requirements.txt -c requirements-lock.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

# Debian packages the tests use: chromium (browser tests; the emoji font so that
# screenshots show ✅/❌), bubblewrap (the grader's sandbox) and npm (installs axe-core, see node-deps). Installed when missing and we are root with apt-get;
# otherwise the browser tests skip loudly and the grader falls back.
system-deps:
	@missing=""; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	fc-list 2>/dev/null | grep -qi "color emoji" || missing="$$missing fonts-noto-color-emoji"; \
	command -v bwrap >/dev/null || missing="$$missing bubblewrap"; \
	command -v npm >/dev/null || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "NOTE:$$missing not installed (needs root and apt-get): browser tests will skip, the grader runs without bwrap"; fi; \
	fi

# JavaScript the tests use (axe-core, the accessibility audit), pinned in package-lock.json, into the
# git-ignored node_modules/. Without npm the accessibility tests fail and say how to get it: a skipped
# audit would read as a pass.
NODE_STAMP := node_modules/.package-lock.json
node-deps: $(NODE_STAMP)

$(NODE_STAMP): package.json package-lock.json
	@if command -v npm >/dev/null; then npm ci --no-audit --no-fund --ignore-scripts --loglevel=error; \
	else echo "NOTE: npm not found (Debian: apt-get install npm): tests/browser/test_accessibility.py and the report's axe test will fail"; fi

# A kernel spec inside .venv, so every notebook (metadata kernelspec
# "causal-attention") runs with the project's interpreter.
# It runs labbook.kernel (IPython's kernel reporting the notebooks' stored language_info: see there why).
$(KERNEL): $(STAMP) shared/labbook/kernel.py
	$(PY) -m ipykernel install --sys-prefix --name causal-attention --display-name "Causal attention (.venv)"
	$(PY) -m labbook.kernel --point-spec $(KERNEL)

# Rebuild notebooks whose text source changed (executes them) and index.ipynb.
build: setup
	$(PY) -m labbook.build

# Message catalogues (gettext .po, kept with Babel): extract the keys the code uses
# into the templates and align every language's catalogue with them.
catalogs: setup
	$(PY) -m labbook.catalogs update

# Scaffold a language: make new-language LANG=fr (see AUTHORING.md).
new-language: setup
	@test -n "$(filter command line,$(origin LANG))" || { echo "usage: make new-language LANG=xx"; exit 2; }
	$(PY) -m labbook.languages new $(LANG)

# Per language, the share of messages, prose cells and glossary rows translated.
translation-status: setup
	$(PY) -m labbook.catalogs status

# Rebuild and re-execute every notebook, stale or not.
build-all: setup
	$(PY) -m labbook.build --force

# The offline HTML edition (build/html/index.html), from the built notebooks.
html: setup build
	$(PY) -m labbook.html_edition --out build/html

# Refresh requirements-lock.txt from a venv built from requirements.txt alone.
lock:
	rm -rf .venv-lock && $(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet --upgrade "pip==$(PIP_VERSION)"
	.venv-lock/bin/python -m pip install --quiet -r requirements.txt
	.venv-lock/bin/python -m pip freeze --exclude-editable | sed 's/+cpu$$//' > requirements-lock.txt
	rm -rf .venv-lock

# The student release (no solutions; check-only package): build/release/ and build/release.zip.
release: setup build
	$(PY) -m autograder release --out build/release --zip build/release.zip

# Mutation testing of the code that decides grades (tests/mutation/run.py; scope in tests/mutation/scope.toml):
#   make mutation [MODULES="exercise lab00"] [MUTATION_JOBS=1]   prints the score per module and the survivors.
MUTATION_STAMP := $(VENV)/.mutation-installed
$(MUTATION_STAMP): requirements-mutation.txt $(STAMP)
	$(PY) -m pip install --quiet -r requirements-mutation.txt -c requirements-lock.txt
	touch $(MUTATION_STAMP)

mutation: setup $(MUTATION_STAMP)
	$(PY) tests/mutation/run.py $(if $(MODULES),--modules "$(MODULES)") $(if $(MUTATION_JOBS),--jobs $(MUTATION_JOBS))

bench: setup
	for b in benchmarks/*.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache
