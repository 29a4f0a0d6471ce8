#!/usr/bin/env bash
# Installs the system tools the tests use, when missing and when we may (root + apt-get).
set -euo pipefail
need=()
command -v mkfs.xfs >/dev/null || need+=(xfsprogs)
# chattr (run_errors: an immutable directory as root) comes with e2fsprogs; setpriv (doctor and
# align tests dropping root) with util-linux; losetup, mount and umount with mount.
command -v mkfs.ext4 >/dev/null && command -v chattr >/dev/null || need+=(e2fsprogs)
command -v fio >/dev/null || need+=(fio)
command -v losetup >/dev/null && command -v umount >/dev/null || need+=(mount)
command -v setpriv >/dev/null || need+=(util-linux)
# The device guard's tests write a GPT with sfdisk and a swap signature with mkswap.
command -v sfdisk >/dev/null || need+=(fdisk)
command -v mkswap >/dev/null || need+=(util-linux)
# weir-cql: TLS builds against OpenSSL; its test node's certificates are made with openssl.
command -v openssl >/dev/null || need+=(openssl)
command -v pkg-config >/dev/null || need+=(pkg-config)
{ command -v pkg-config >/dev/null && pkg-config --exists openssl; } || need+=(libssl-dev)
# weir-report's page test renders the page in headless Chromium.
command -v chromium >/dev/null || need+=(chromium)
if [ ${#need[@]} -eq 0 ]; then
  echo "all present: mkfs.xfs mkfs.ext4 chattr fio losetup mount umount setpriv sfdisk mkswap openssl pkg-config libssl-dev chromium"
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "missing ${need[*]} and cannot install them here (needs root and apt-get);"
  echo "the tests that need them will skip with a printed reason (as root they fail)"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
echo "installed ${need[*]}"
