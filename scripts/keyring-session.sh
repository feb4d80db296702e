#!/usr/bin/env bash
# Runs a command inside its own D-Bus session with an unlocked gnome-keyring (a real Secret
# Service for the keychain test), in a throwaway HOME so the test keyring stays away from the
# user's own. The daemons' own chatter (dbus-daemon's "Failed to set fd limit" as root in a
# container, service activations) is not the tests' output: it goes to a log, $MEDIADESK_SESSION_LOG.
# The keyring runs in the foreground of the session and ends with the command (as a daemon it
# outlived the session); the command starts once the keyring answers on the bus. The session's HOME
# is removed as it ends, and its log too unless the command failed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ -z "${MEDIADESK_SESSION_LOG:-}" ]; then
  MEDIADESK_SESSION_LOG="$(mktemp -t mediadesk-dbus.XXXXXX)"
  export MEDIADESK_SESSION_LOG_OURS=1
fi
export MEDIADESK_SESSION_LOG
HOME="$(mktemp -d)" exec dbus-run-session --dbus-daemon="$here/dbus-daemon-logged.sh" -- sh -c '
  echo -n pw | gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null 2>>"$MEDIADESK_SESSION_LOG" &
  keyring=$!
  tries=0
  until dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true"; do
    tries=$((tries + 1))
    [ "$tries" -ge 200 ] && break
    sleep 0.05
  done
  status=0
  "$@" || status=$?
  kill "$keyring" 2>/dev/null || true
  wait "$keyring" 2>/dev/null || true
  # The throwaway HOME (its keyring) goes with the session; the log stays only if the command failed.
  rm -rf "$HOME"
  if [ "$status" -eq 0 ] && [ -n "${MEDIADESK_SESSION_LOG_OURS:-}" ]; then rm -f "$MEDIADESK_SESSION_LOG"; fi
  exit "$status"' sh "$@"
