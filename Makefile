# ProfirestAPI — every command a developer or CI runs. `make test` is what CI runs.
SHELL := /bin/bash
PYTHON ?= python3
SWIFT ?= swift
VENV := .venv
VPY := $(VENV)/bin/python
REQUIREMENTS := tools/requirements.txt $(wildcard sandbox/requirements.txt)
SWIFT_BUILD_FLAGS := -Xswiftc -warnings-as-errors

.PHONY: testing-kit-test lint-workflows chart snippets check-snippets check-curl-abi check-pq-abi dist dist-test quickstart-test soak soak-replicas soak-short swift-test-tsan test lint-contract generate check-generated build docs swift-test sandbox-test tools-test demo-test fuzz sandbox sandbox-reset approve demo bench venv clean files-touched

## test: everything CI runs — contract lint, generator drift, warning-free build, docs, swift test, sandbox tests, the
## scripts' tests, fuzz, the release archive. Every step runs to its end even when an earlier one failed (a step that
## needs a failed one fails too), so one run shows every failure; the run ends with the failed steps and the line
## `make-test: N passed, N failed`, and fails when any step failed (scripts/run-steps.sh). `make STEP` runs one.
TEST_STEPS := lint-contract lint-workflows check-generated check-snippets check-curl-abi check-pq-abi build docs swift-test swift-test-tsan sandbox-test tools-test \
	demo-test soak-short fuzz dist-test quickstart-test testing-kit-test
test:
	@MAKE="$(MAKE) --no-print-directory FUZZ_SEED=$(FUZZ_SEED) FUZZ_OPT=$(FUZZ_OPT)" scripts/run-steps.sh make-test $(TEST_STEPS)

## venv: the Python tools (contract lint, sandbox) in .venv, reinstalled when a requirements file changes; pip's output
## goes to a log shown only when it fails, a line and dots say that it runs (scripts/progress.sh)
venv: $(VENV)/.installed
$(VENV)/.installed: $(REQUIREMENTS)
	@scripts/progress.sh "Installing the sandbox's and tools' Python packages into $(VENV) (first run, ~1 min)…" \
		sh -c '$(PYTHON) -m venv $(VENV) && $(VPY) -m pip install --disable-pip-version-check $(addprefix -r ,$(REQUIREMENTS))'
	@touch $@

lint-contract: venv
	$(VPY) tools/lint_contract.py

## lint-workflows: actionlint over the GitHub Actions workflows (.github/workflows: syntax, expressions, runner labels,
## the inputs of the actions it knows) and shellcheck over their `run:` scripts, both from .venv. The workflows have
## never run here (no macOS, Windows or simulator runners); this is all that checks them locally.
lint-workflows: venv
	$(VENV)/bin/actionlint -shellcheck=$(VENV)/bin/shellcheck -pyflakes= .github/workflows/*.yml

## check-curl-abi: the libcurl constants and structures Sources/CProfirestCurl declares, checked at compile time against
## curl's own headers (Debian's libcurl4-openssl-dev, downloaded and unpacked into a temporary directory when the
## headers are not installed; tools/check_curl_abi.py)
check-curl-abi:
	$(PYTHON) tools/check_curl_abi.py

## check-pq-abi: the libpq constants, function prototypes and the one structure Sources/CProfirestPQ mirrors, checked at
## compile time against libpq's own headers (Debian's libpq-dev, downloaded and unpacked into a temporary directory when
## the headers are not installed; tools/check_pq_abi.py)
check-pq-abi:
	$(PYTHON) tools/check_pq_abi.py

## generate: rewrite Sources/ProfirestAPI/Generated and the testing kit's Sources/ProfirestTesting/Generated (the
## contract's example answers) from the contract, and the articles' snippet test (snippets)
GENERATED_DIRS := Sources/ProfirestAPI/Generated Sources/ProfirestTesting/Generated
generate: snippets
	$(SWIFT) run --quiet profirest-codegen generate contract/profirest-v2.openapi.json $(GENERATED_DIRS)

## snippets: every ```swift block of the DocC articles (Sources/ProfirestAPI/ProfirestAPI.docc) into
## Tests/ProfirestAPITests/Docs/ArticleSnippets.swift, a method each, which the test build compiles
## (tools/article_snippets.py; part of `make docs` and `make generate`)
snippets:
	$(PYTHON) tools/article_snippets.py

## check-snippets: fail when an article changed and ArticleSnippets.swift was not regenerated
check-snippets:
	$(PYTHON) tools/article_snippets.py --check

## check-generated: fail when the generated files (the library's and the testing kit's) differ from what the contract gives
check-generated:
	$(SWIFT) run --quiet profirest-codegen check contract/profirest-v2.openapi.json $(GENERATED_DIRS)

## build: every target, warnings as errors — on Linux also the test-only targets that compile the Windows and Apple
## branches against declaration shims (PlatformShims, TestSupportWindowsCheck, BenchWindowsCheck; CONTRIBUTING.md,
## "Platform code") — after tools/check_platform_branches.py has checked that every platform branch is compiled by one of them
build:
	$(PYTHON) tools/check_platform_branches.py
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

## docs: the DocC documentation of ProfirestAPI in .build/docs, a static site whose root redirects to
## /documentation/profirestapi/ (tools/docs_index.py, which ends the run by printing how to serve it:
## `python3 -m http.server -d .build/docs 8000`, then http://127.0.0.1:8000/).
## Fails when a public symbol (of ProfirestAPI or ProfirestPostgres) has no doc comment, or a public function with
## parameters outside Generated/ lacks its `- Parameters:`, `- Returns:` or `- Throws:` section (tools/check_docs.py), a
## ``Symbol`` link is broken, a folder
## of the library uses a type of a folder above it (tools/check_layers.py), or a public type is declared in a file not
## named after it (tools/check_one_type_per_file.py). Regenerates
## the articles' snippet test first (snippets), so that the next test build compiles what the articles show.
## dump-symbol-graph shares the build of `make build`; on Linux it exits 1 because it also tries the synthesized
## test-runner modules (<package>PackageTests, <package>PackageDiscoveredTests), which it cannot load — that error is
## ignored, any other fails, and the graph is removed first so a stale one cannot pass.
SYMBOLGRAPH_DIR := .build/symbolgraph-ProfirestAPI
## The second library product's public API is checked the same way (tools/check_docs.py --module ProfirestPostgres).
SYMBOLGRAPH_DIR_PG := .build/symbolgraph-ProfirestPostgres
## The testing kit's too, and its catalog (the article "Testing your app") is a site of its own in .build/docs-testing.
SYMBOLGRAPH_DIR_KIT := .build/symbolgraph-ProfirestTesting
DOCC ?= docc
docs: snippets
	@bin="$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)" && graphs="$$(dirname "$$bin")/symbolgraph" && \
	rm -rf "$$graphs" $(SYMBOLGRAPH_DIR) && mkdir -p $(SYMBOLGRAPH_DIR) && \
	echo "$(SWIFT) package $(SWIFT_BUILD_FLAGS) dump-symbol-graph --minimum-access-level public" && \
	{ $(SWIFT) package $(SWIFT_BUILD_FLAGS) dump-symbol-graph --minimum-access-level public >.build/dump-symbol-graph.log 2>&1 \
	  || ! grep 'error:' .build/dump-symbol-graph.log | grep -v "symbol graph for '[A-Za-z0-9_]*Package\(Discovered\)\?Tests'" \
	  || { cat .build/dump-symbol-graph.log; exit 1; }; } && \
	cp "$$graphs"/ProfirestAPI.symbols.json $$(compgen -G "$$graphs/ProfirestAPI@*.symbols.json") $(SYMBOLGRAPH_DIR)/ && \
	rm -rf $(SYMBOLGRAPH_DIR_PG) && mkdir -p $(SYMBOLGRAPH_DIR_PG) && \
	cp "$$graphs"/ProfirestPostgres.symbols.json $$(compgen -G "$$graphs/ProfirestPostgres@*.symbols.json") $(SYMBOLGRAPH_DIR_PG)/ && \
	rm -rf $(SYMBOLGRAPH_DIR_KIT) && mkdir -p $(SYMBOLGRAPH_DIR_KIT) && \
	cp "$$graphs"/ProfirestTesting.symbols.json $$(compgen -G "$$graphs/ProfirestTesting@*.symbols.json") $(SYMBOLGRAPH_DIR_KIT)/
	$(PYTHON) tools/check_docs.py $(SYMBOLGRAPH_DIR)
	$(PYTHON) tools/check_docs.py $(SYMBOLGRAPH_DIR_PG) --module ProfirestPostgres
	$(PYTHON) tools/check_docs.py $(SYMBOLGRAPH_DIR_KIT) --module ProfirestTesting
	$(PYTHON) tools/check_readme_map.py
	$(PYTHON) tools/check_layers.py
	$(PYTHON) tools/check_one_type_per_file.py
	$(PYTHON) tools/public_surface.py $(SYMBOLGRAPH_DIR)/ProfirestAPI.symbols.json
	$(DOCC) convert Sources/ProfirestAPI/ProfirestAPI.docc --additional-symbol-graph-dir $(SYMBOLGRAPH_DIR) \
		--fallback-display-name ProfirestAPI --fallback-bundle-identifier cz.profirest.api \
		--output-dir .build/docs --warnings-as-errors
	$(DOCC) convert Sources/ProfirestTesting/ProfirestTesting.docc --additional-symbol-graph-dir $(SYMBOLGRAPH_DIR_KIT) \
		--fallback-display-name ProfirestTesting --fallback-bundle-identifier cz.profirest.testing \
		--output-dir .build/docs-testing --warnings-as-errors
	@$(PYTHON) tools/docs_index.py .build/docs-testing --module profiresttesting --port 8001
	@$(PYTHON) tools/docs_index.py .build/docs

swift-test: venv
	PROFIREST_SANDBOX_PYTHON=$(abspath $(VPY)) $(SWIFT) test $(SWIFT_BUILD_FLAGS)

## files-touched: how many library files a 401 → refresh → retry, a POST and an outbox delivery run through (coverage of
## Tests/ProfirestAPITests/Client/RequestPathTests.swift in .build/cov; not part of make test)
files-touched:
	$(PYTHON) tools/files_touched.py --list

## swift-test-tsan: the suite again under ThreadSanitizer, in a build directory of its own (.build/tsan) so the
## ordinary build stays as it is; a data race fails it. Some suites are left to swift-test: the storage fault sweep
## (the same client life run once per storage operation, some 140 times — no code it alone reaches), the 200-feed
## fleet (a load test), the cross-process suites (their races are between processes, which TSan does not see; the
## in-process lock paths are in the storage suites) and the suites behind nginx (the same engine code as
## CurlTransportTests and the sandbox suites, over a proxy); under TSan they cost about 80 s of CI's 30 minutes.
## TimerLifetimeTests measures another process's resident memory, which TSan's shadow memory would swamp (the shared
## timer's races are DeadlineSweeperTests', which run here).
TSAN_SKIP := StorageFaultSweepTests|FleetReconnectIntegrationTests|CrossProcessOutboxTests|CrossProcessRefreshTests
TSAN_SKIP := $(TSAN_SKIP)|FeedBehindProxiesTests|ConsentBehindProxyTests|TimerLifetimeTests
swift-test-tsan: venv
	PROFIREST_SANDBOX_PYTHON=$(abspath $(VPY)) TSAN_OPTIONS=halt_on_error=1 \
		$(SWIFT) test --sanitize=thread --scratch-path .build/tsan $(SWIFT_BUILD_FLAGS) --skip '$(TSAN_SKIP)'

## sandbox-test: pytest for every sandbox rule, the admin page in headless chromium, a bounded schemathesis run
sandbox-test: venv
	$(VPY) -m pytest -q -p no:cacheprovider sandbox/tests

## tools-test: pytest for the developer scripts and tools themselves (tools/tests); compiles no Swift
tools-test: venv
	$(VPY) -m pytest -q -p no:cacheprovider tools/tests

## fuzz: libFuzzer with AddressSanitizer over what the library reads from servers and files (fuzz/Fuzz.swift: the
## event stream, error and model responses, the state document, dates, Retry-After), the library's sources compiled in.
## Replays fuzz/seeds, then explores for FUZZ_SECONDS; a crash or a broken property leaves its input in .build/fuzz.
## Leak detection is off: the Swift runtime's metadata caches live for the whole process and read as leaks.
SWIFTC ?= swiftc
FUZZ_SECONDS ?= 30
## FUZZ_SEED: libFuzzer's random seed; empty (a new one each run) for `make fuzz`, fixed under `make test` so that a
## test run never fails by chance on an input nobody has seen before — exploring is `make fuzz`'s job, and what it
## finds is fixed and kept in fuzz/seeds, which every run replays first. (`make test` hands it to its steps' make.)
FUZZ_SEED ?=
test: FUZZ_SEED = 1
## FUZZ_OPT: the fuzzer's optimisation; -O for `make fuzz`, which explores, and -Onone under `make test`, which replays
## the seeds and explores 30 s: its build takes 37 s instead of about 130 s, and it still runs 2,400 inputs a second.
FUZZ_OPT ?= -O
test: FUZZ_OPT = -Onone
fuzz:
	mkdir -p .build/fuzz/corpus
	set -o pipefail; $(SWIFTC) -sanitize=fuzzer,address -parse-as-library -module-name ProfirestAPI -package-name profirest_api_swift -swift-version 6 $(FUZZ_OPT) -wmo -DPROFIREST_NO_CURL \
		fuzz/Fuzz.swift $$(find Sources/ProfirestAPI -name '*.swift' | sort) -o .build/fuzz/profirest-fuzz 2>&1 \
		| { grep -v "Cannot export local symbol" || true; }
	cd .build/fuzz && ASAN_OPTIONS=detect_leaks=0 ./profirest-fuzz -max_total_time=$(FUZZ_SECONDS) -max_len=4096 $(if $(FUZZ_SEED),-seed=$(FUZZ_SEED)) \
		-print_final_stats=1 corpus ../../fuzz/seeds 2>&1 | grep -E "^(stat::|Done|INFO: seed|property|==)" ; exit $${PIPESTATUS[0]}

## sandbox: the local Profirest API v2 server on 127.0.0.1:8080 (state kept in sandbox/state.sqlite3, the same file
## `make demo` uses, so a restart either way keeps the pairings)
sandbox: venv
	@$(VPY) -m sandbox

## sandbox-reset: start clean — deletes the sandbox's state and the demo terminal's token and outbox files, and says
## what it deleted (refuses while a sandbox answers on the port; stop it first)
sandbox-reset:
	@scripts/sandbox-reset.sh

## approve: approves a pairing code on the running sandbox, `make approve CODE=KXCB-TQPW` (RESTAURANT=11);
## scripts/approve.sh CODE does the same from any directory
RESTAURANT ?= 11
approve:
	@[ -n "$(CODE)" ] || { echo "usage: make approve CODE=KXCB-TQPW [RESTAURANT=11]" >&2; exit 2; }
	@scripts/approve.sh "$(CODE)" --restaurant "$(RESTAURANT)"

## demo-test: the example terminal end to end against a sandbox (needs `make build` first)
demo-test: venv build
	$(VPY) -m pytest -q -p no:cacheprovider Tests/Demo

## demo: the sandbox plus the example attendance terminal against it
demo: venv
	@scripts/demo.sh

## bench: every figure of BENCHMARKS.md — the library (its default transport) vs raw URLSession and vs libcurl driven
## directly on loopback (GET, POST, paging), the event feed (latency, rate, memory, polling), quiet streams' idle CPU,
## the refresh stampede (in-process and 8 processes) and the outbox (enqueue, drain, journal size) against the sandbox,
## the real network at +50 ms (nginx with TLS, HTTP/2 and HTTP/1.1; needs root and nginx, else skipped with the
## reason), a partner's 1,000 restaurants in one process against the sandbox, clean build times — into
## benchmarks/results/latest.json, then the chart benchmarks/results/figures.png (about 25 minutes). BENCH_SKIP leaves
## parts out (e.g. BENCH_SKIP=build,stampede,idle). Parts: get, post, curl (the loopback GET/POST comparison; curl = the
## direct-libcurl floor), sse, idle (quiet streams, 2 min 30 s), paging, stampede, outbox, net50 (the +50 ms network; as
## root it puts the harness's CA in the system store for raw URLSession and removes it at the end), compress (a 200 KB
## list over the +50 ms path, gzip vs plain; needs nginx), partner (1,000
## restaurants: memory, threads, idle CPU, latency, failing feeds, gaps, TCP connections through nginx; about 3 min),
## build. One part alone: .build/release/ProfirestBench --only partner (--idle-seconds 60, --net-rounds 7,
## --partner-connections 1000 set their size).
## BENCH_BUILD_FLAGS adds swift build options (e.g. --scratch-path).
BENCH_BUILD_FLAGS ?=
BENCH_SKIP ?=
bench: venv $(VENV)/.bench-installed
	$(SWIFT) build -c release --product ProfirestBench $(SWIFT_BUILD_FLAGS) $(BENCH_BUILD_FLAGS)
	$(SWIFT) build -c release --product ProfirestRefreshProbe $(SWIFT_BUILD_FLAGS) $(BENCH_BUILD_FLAGS)
	PROFIREST_SANDBOX_PYTHON=$(abspath $(VPY)) $$($(SWIFT) build -c release --show-bin-path $(BENCH_BUILD_FLAGS))/ProfirestBench \
		--output benchmarks/results/latest.json $(if $(BENCH_SKIP),--skip $(BENCH_SKIP))
	$(VPY) benchmarks/chart.py benchmarks/results/latest.json benchmarks/results/figures.png

## chart: benchmarks/results/figures.png from benchmarks/results/latest.json (matplotlib, benchmarks/requirements.txt)
chart: venv $(VENV)/.bench-installed
	$(VPY) benchmarks/chart.py benchmarks/results/latest.json benchmarks/results/figures.png

## The chart's Python packages, only for make bench / make chart (make test does not need them).
$(VENV)/.bench-installed: benchmarks/requirements.txt $(VENV)/.installed
	$(VPY) -m pip install --quiet --disable-pip-version-check -r benchmarks/requirements.txt
	touch $@

clean:
	rm -rf .build $(VENV) dist

## dist: the release archive as the reference ships it, dist/profirest-api-swift-<VERSION>.tar.gz — `git archive` of
## the commit (HEAD), so what is not committed is not in it. The version comes from the VERSION file alone.
VERSION := $(shell cat VERSION)
DIST_NAME := profirest-api-swift-$(VERSION)
dist:
	@mkdir -p dist
	git archive --format=tar.gz --prefix=$(DIST_NAME)/ -o dist/$(DIST_NAME).tar.gz HEAD
	@git diff --quiet HEAD || echo "note: uncommitted changes are not in dist/$(DIST_NAME).tar.gz (it is HEAD)"

## dist-test: unpacks the archive next to a tiny package that uses it as the README's install snippet shows, builds
## that package (the library compiled once more, about a minute) and runs it (tools/check_dist.sh)
dist-test: dist
	SWIFT=$(SWIFT) tools/check_dist.sh dist/$(DIST_NAME).tar.gz $(DIST_NAME)

## quickstart-test: the README's Quick start as it stands — its Package.swift and main.swift, verbatim, in a new
## package beside a copy of this working tree named as a clone is (profirest-api-swift) — built (the library compiled
## once more, about a minute; tools/check_quickstart.py)
quickstart-test:
	SWIFT=$(SWIFT) $(PYTHON) tools/check_quickstart.py

## testing-kit-test: the article "Testing your app" as it stands — a new package outside the repository, depending on
## it by path (a link, nothing copied) and on the ProfirestTesting product, with the article's test target and its
## test file verbatim — and `swift test` there (the library and the kit compiled once more: about 45 s;
## tools/check_testing_kit.py)
testing-kit-test:
	SWIFT=$(SWIFT) $(PYTHON) tools/check_testing_kit.py

## soak: writes through the outbox against the sandbox's random faults (30 %), a restart and a token expiry, counted
## from the sandbox's own records, and SIGKILLed writers — at random, or inside a journal append or compaction —
## finished by a restart (benchmarks/ProfirestBench/Soak.swift);
## then the event feed read through stream cuts, outages, polling phases and cursor expiries, counted by event id
## (SoakEvents.swift); the refresh across processes on one token file (SoakRefresh.swift); a token file failing 1 % of
## its operations (SoakStorageFaults.swift); then the replica trials
## (SoakReplicas.swift: 4 replica processes x 250 connections on a PostgreSQL of the run's own, a strict sandbox,
## tokens expiring every 4 s, 100 replicas SIGKILLed at random; `make soak-replicas` runs them alone); writes
## benchmarks/results/soak.json and fails when a write is lost or doubled or a target is missed.
## SOAK_WRITES, SOAK_KILLS, SOAK_EVENTS set the size.
SOAK_WRITES ?= 10000
SOAK_KILLS ?= 100
SOAK_EVENTS ?= 100000
soak: venv
	$(SWIFT) build -c release --product ProfirestBench $(SWIFT_BUILD_FLAGS) $(BENCH_BUILD_FLAGS)
	$(SWIFT) build -c release --product ProfirestRefreshProbe $(SWIFT_BUILD_FLAGS) $(BENCH_BUILD_FLAGS)
	PROFIREST_SANDBOX_PYTHON=$(abspath $(VPY)) $$($(SWIFT) build -c release --show-bin-path $(BENCH_BUILD_FLAGS))/ProfirestBench \
		--soak --writes $(SOAK_WRITES) --kill-trials $(SOAK_KILLS) --events $(SOAK_EVENTS) --output benchmarks/results/soak.json

## soak-replicas: the replica trials of make soak alone (`ProfirestBench --soak --only replica`), merged into
## benchmarks/results/soak.json
soak-replicas: venv
	$(SWIFT) build -c release --product ProfirestBench $(SWIFT_BUILD_FLAGS) $(BENCH_BUILD_FLAGS)
	$(SWIFT) build -c release --product ProfirestRefreshProbe $(SWIFT_BUILD_FLAGS) $(BENCH_BUILD_FLAGS)
	PROFIREST_SANDBOX_PYTHON=$(abspath $(VPY)) $$($(SWIFT) build -c release --show-bin-path $(BENCH_BUILD_FLAGS))/ProfirestBench \
		--soak --only replica --output benchmarks/results/soak.json

## soak-short: the same, small, in the debug build (part of make test); results in .build/soak-short.json. The
## replica trials: 2 processes x 20 connections, tokens of 2 s, 5 kills over 10 s and one death inside the window.
SOAK_SHORT_REPLICAS := --replica-processes 2 --replica-connections 20 --replica-kills 5 --replica-seconds 10 \
	--replica-token-ttl 2 --replica-margin 0.5 --replica-interval 0.5 --replica-window-kills 1
soak-short: venv build
	PROFIREST_SANDBOX_PYTHON=$(abspath $(VPY)) $$($(SWIFT) build --show-bin-path)/ProfirestBench \
		--soak --writes 600 --kill-trials 5 --refresh-seconds 8 --refresh-kills 12 --events 3000 --storage-faults 100 \
		$(SOAK_SHORT_REPLICAS) \
		--output .build/soak-short.json
