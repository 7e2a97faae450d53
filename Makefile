# The two promises of the README: `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test bench clean

# an editable install from pyproject.toml alone needs pip 21.3 (PEP 660); a newer bundled pip is kept, which
# spares a download and a reinstall of pip on every fresh machine
$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q 'pip>=21.3'

$(VENV)/.demo-installed: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[demo]'
	touch $@

$(VENV)/.test-installed: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[test,demo]'
	touch $@

demo: $(VENV)/.demo-installed
	$(PY) examples/demo.py

# one worker per core; a worker that runs out of tests takes some of the other's (the programs take minutes)
test: $(VENV)/.test-installed
	EMBER_SLOW_PROGRAMS=1 $(PY) -m pytest -n auto --dist worksteal

bench: $(VENV)/.test-installed
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) build src/*.egg-info
