# Two entry points (see README): `make demo` and `make test`. Both install what they need.
PYTHON ?= python3
SAMPLES := samples/gpt-tiny-base samples/gpt-tiny-lr2x
APT_PACKAGES := fonts-wqy-microhei libpango-1.0-0 libpangoft2-1.0-0 chromium poppler-utils

.PHONY: demo test install system-deps bench samples

system-deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

install: system-deps
	$(PYTHON) -m pip install -q -e '.[dev]'

# Build both sample runs into out/: the baseline first, then the changed run against it.
demo: install
	postmortem build samples/gpt-tiny-base --experiment gpt-tiny
	postmortem build samples/gpt-tiny-lr2x --experiment gpt-tiny --baseline prev
	@echo "open out/index.html"

test: install
	$(PYTHON) -m pytest -q

# Regenerating samples needs MindSpore (2.5 GB): only for changing them, never for reading runs.
samples:
	$(PYTHON) -m pip install -q -e '.[samples]'
	$(PYTHON) samples/make_samples.py

bench: install
	$(PYTHON) bench/run.py
