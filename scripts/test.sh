#!/usr/bin/env bash
# The README's test command. On a fresh Debian machine it installs what is missing (system
# packages when run as root, Node 24 from the npm registry, npm dependencies), then runs
# `npm test` inside a D-Bus session with an unlocked gnome-keyring, so the keychain test talks to
# a real Secret Service.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/env.sh

need=()
command -v chromium >/dev/null || need+=(chromium)
command -v dbus-run-session >/dev/null || need+=(dbus)
command -v gnome-keyring-daemon >/dev/null || need+=(gnome-keyring)
command -v ffmpeg >/dev/null || need+=(ffmpeg)
command -v Xvfb >/dev/null || need+=(xvfb)
command -v curl >/dev/null || need+=(curl)
# exiftool (results keep their metadata) runs on the full perl, not perl-base alone.
perl -MEncode -MPOSIX -e1 2>/dev/null || need+=(perl)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "[test] installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "[test] missing system packages: ${need[*]} (install them with apt-get; continuing)" >&2
  fi
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[test] npm ci (Node $(node --version))"
  npm_config_nodedir="${NODE24_DIR:-}" npm ci --no-audit --no-fund
fi

if command -v dbus-run-session >/dev/null && command -v gnome-keyring-daemon >/dev/null; then
  export MEDIADESK_TEST_KEYRING=1
  # A throwaway HOME keeps the test keyring away from the user's own.
  HOME="$(mktemp -d)" exec dbus-run-session -- sh -c 'echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null; exec npm test'
fi
exec npm test
