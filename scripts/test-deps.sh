#!/usr/bin/env bash
# Installs what `make test` needs beyond Go, on Debian 12 (CI) or a
# developer's Debian/Ubuntu machine. Idempotent: only what is missing is
# installed.
#   openssl                      PKCS#12 checks
#   gcc                          cgo for -race
#   systemd                      systemd-analyze verify, systemctl --root (service install test)
#   qemu-user-static             the linux/arm and linux/arm64 smoke test
#   wine64                       the windows/amd64 smoke test (64-bit Wine alone:
#                                no i386 architecture needed)
#   gcc-mingw-w64-x86-64-win32   builds the Wine stand-in for bcryptprimitives.dll
#   dpkg                         the package test (dpkg-deb, dpkg --root)
#   chromium, fonts-liberation   the console's browser tests (playwright-core drives
#                                Debian's Chromium; its own browser downloads are not used)
#   iproute2, util-linux         ip and unshare: the mesh tests' network namespaces
#   zbar-tools                   zbarimg: QR codes read back by a decoder not ours (invitations)
#   python3-grpcio,              the federation peer not written in Go (scripts/interop/fedpeer.py,
#   python3-grpc-tools           its code generated from our .proto at test time)
#   python3-protobuf             the federation v1 peer (scripts/interop/fedpeer_v1.py)
# and the npm packages of the interoperability tests (scripts/interop) and of
# the console (web: esbuild, playwright-core).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
need() { # need COMMAND PACKAGE: queue PACKAGE when COMMAND is missing
  command -v "$1" >/dev/null 2>&1 || [ -x "$1" ] || need_apt+=("$2")
}
need openssl openssl
need gcc gcc
need systemd-analyze systemd
need systemctl systemd
need qemu-arm-static qemu-user-static
need qemu-aarch64-static qemu-user-static
need /usr/lib/wine/wine64 wine64
need x86_64-w64-mingw32-gcc gcc-mingw-w64-x86-64-win32
need dpkg-deb dpkg
need /usr/bin/chromium chromium
need ip iproute2
need unshare util-linux
need zbarimg zbar-tools
[ -f /usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf ] || need_apt+=(fonts-liberation)
/usr/bin/python3 -c 'import grpc' >/dev/null 2>&1 || need_apt+=(python3-grpcio)
/usr/bin/python3 -c 'import grpc_tools.protoc' >/dev/null 2>&1 || need_apt+=(python3-grpc-tools)
/usr/bin/python3 -c 'import google.protobuf' >/dev/null 2>&1 || need_apt+=(python3-protobuf)
if [ ${#need_apt[@]} -gt 0 ]; then
  # shellcheck disable=SC2207
  need_apt=($(printf '%s\n' "${need_apt[@]}" | sort -u))
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need_apt[@]}"
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
