#!/usr/bin/env bash
# Runs every linter (make lint) or every formatter (make fmt), each in turn,
# and fails if any one of them found something; the others still run, so one
# pass shows all findings.
#   go        golangci-lint (.golangci.yml)
#   <app>     make -C apps/<app> lint|fmt (ruff, eslint, rubocop, spotless + PMD)
#   shell     shellcheck (.shellcheckrc) on every shell script in scripts/,
#             .ci/ and the apps' serve scripts, found by name or #! line
#   yaml      yamllint (.yamllint.yaml) on overlays/, scenarios/, bench/, .github/, scale/metrics.yml
#   actions   actionlint on .github/workflows
#   docs      tests/docs: every relative Markdown link and #anchor resolves,
#             every section a comment cites by name exists (no network)
# The tools come from scripts/lint-tools.sh (make lint-tools).
# Usage: scripts/lint.sh [--fix] [SUITE...]   (default: all of the above)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

fix=false
if [ "${1:-}" = --fix ]; then fix=true; shift; fi
BIN=$(bash scripts/lint-tools.sh --print-dir)/bin
apps=()
for m in apps/*/Makefile; do a=${m#apps/}; apps+=("${a%/Makefile}"); done
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(go "${apps[@]}" shell yaml actions docs)

tool() {
  if [ -x "$BIN/$1" ]; then echo "$BIN/$1"
  elif command -v "$1" >/dev/null; then command -v "$1"
  else echo "lint: $1 not found in $BIN or on PATH; run make lint-tools" >&2; return 1
  fi
}

# shell_files: scripts by name (*.sh) or by a sh/bash #! line, so a script
# added later is linted without a change here.
shell_files() {
  local f
  for f in scripts/* .ci/* apps/*/serve; do
    [ -f "$f" ] || continue
    case $f in
      *.sh) echo "$f" ;;
      *) head -n1 "$f" | grep -qE '^#!.*[/ ](ba)?sh([[:space:]]|$)' && echo "$f" ;;
    esac
  done
}

run() {
  local suite=$1 t
  case $suite in
    go)
      t=$(tool golangci-lint) || return 1
      if $fix; then "$t" fmt ./...; else "$t" run ./...; fi ;;
    shell)
      t=$(tool shellcheck) || return 1
      local files
      mapfile -t files < <(shell_files)
      # There is no shell formatter here; fmt leaves scripts alone.
      $fix || "$t" "${files[@]}" ;;
    yaml)
      t=$(tool yamllint) || return 1
      # Nor a YAML one.
      # scale/ holds Go templates (not YAML) but for its metrics profile.
      $fix || "$t" --strict overlays scenarios bench .github .yamllint.yaml scale/metrics.yml ;;
    actions)
      t=$(tool actionlint) || return 1
      $fix || "$t" ;;
    docs)
      # Links are fixed by hand; fmt leaves them alone.
      $fix || "${GO:-go}" test -count=1 ./tests/docs/ ;;
    *)
      [ -f "apps/$suite/Makefile" ] || { echo "lint: unknown suite $suite (want go, shell, yaml, actions, docs or one of: ${apps[*]})" >&2; return 1; }
      if $fix; then make --no-print-directory -C "apps/$suite" fmt; else make --no-print-directory -C "apps/$suite" lint; fi ;;
  esac
}

failed=()
for suite in "${suites[@]}"; do
  echo "==> lint $suite"
  run "$suite" || failed+=("$suite")
done
if [ ${#failed[@]} -gt 0 ]; then
  if $fix; then
    echo "fmt: ${failed[*]} failed (see above)" >&2
  else
    echo "lint: findings in ${failed[*]} (see above; make fmt fixes what a formatter can)" >&2
  fi
  exit 1
fi
if $fix; then echo "fmt: ${#suites[@]} suites formatted"; else echo "lint: ${#suites[@]} suites clean"; fi
