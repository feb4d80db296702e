#!/usr/bin/env bash
# Runs a command inside its own D-Bus session with an unlocked gnome-keyring (a real Secret
# Service for the keychain test), in a throwaway HOME so the test keyring stays away from the
# user's own. The daemons' own chatter (dbus-daemon's "Failed to set fd limit" as root in a
# container, service activations) is not the tests' output: it goes to a log, $MEDIADESK_SESSION_LOG.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export MEDIADESK_SESSION_LOG="${MEDIADESK_SESSION_LOG:-$(mktemp -t mediadesk-dbus.XXXXXX)}"
HOME="$(mktemp -d)" exec dbus-run-session --dbus-daemon="$here/dbus-daemon-logged.sh" -- sh -c \
  'echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>>"$MEDIADESK_SESSION_LOG"; exec "$@"' \
  sh "$@"
