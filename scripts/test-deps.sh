#!/usr/bin/env bash
# Installs what `make test` needs beyond Go: openssl (PKCS#12 checks), Chromium
# (the console's browser tests), the npm packages of the interoperability
# tests (scripts/interop) and of the console (web: esbuild, playwright-core).
# Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc)
# Debian's Chromium; playwright-core drives it (its own browser downloads are
# not used).
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq "${need_apt[@]}"
  else
    echo "please install: ${need_apt[*]}" >&2
    exit 1
  fi
fi

if [ -f scripts/interop/package-lock.json ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "npm is needed for the interoperability tests (Node 20)" >&2
    exit 1
  fi
  (cd scripts/interop && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ -f web/package-lock.json ]; then
  (cd web && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "test dependencies ready"
