#!/usr/bin/env bash
# The README's test command. On a fresh Debian machine it installs what is missing (system
# packages when run as root, Node 24 from the npm registry, npm dependencies), then runs
# `npm test` inside a D-Bus session with an unlocked gnome-keyring, so the keychain test talks to
# a real Secret Service.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/env.sh

need=()
# Playwright drives Chromium's headless shell (far less CPU than the desktop browser), and the desktop
# one where the shell differs (notifications).
command -v chromium-headless-shell >/dev/null || need+=(chromium-headless-shell)
command -v chromium >/dev/null || need+=(chromium)
command -v dbus-run-session >/dev/null || need+=(dbus)
# dbus-send: the keyring session waits until the keyring answers on the bus.
command -v dbus-send >/dev/null || need+=(dbus-bin)
command -v gnome-keyring-daemon >/dev/null || need+=(gnome-keyring)
command -v ffmpeg >/dev/null || need+=(ffmpeg)
command -v Xvfb >/dev/null || need+=(xvfb)
command -v curl >/dev/null || need+=(curl)
# The team server's tests start a real PostgreSQL (test/pg.ts) as the postgres user.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
# exiftool (results keep their metadata) runs on the full perl, not perl-base alone.
perl -MEncode -MPOSIX -e1 2>/dev/null || need+=(perl)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "[test] installing ${need[*]}"
    # apt and debconf warn on stderr as they install (no apt-utils, no dialog): that is not the
    # tests' output, so it is kept in a log and shown only when the install fails.
    apt_log=$(mktemp -t mediadesk-apt.XXXXXX)
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"; } >"$apt_log" 2>&1; then
      cat "$apt_log" >&2
      echo "[test] installing ${need[*]} failed (above)" >&2
      exit 1
    fi
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
  exec bash scripts/keyring-session.sh npm test
fi
exec npm test
