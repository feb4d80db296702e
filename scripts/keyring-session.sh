#!/usr/bin/env bash
# Runs a command inside its own D-Bus session with an unlocked gnome-keyring (a real Secret
# Service for the keychain tests), in a throwaway HOME so the test keyring stays away from the
# user's own. The daemons' own chatter (dbus-daemon's "Failed to set fd limit" as root in a
# container, service activations) is not the tests' output: it goes to a log, $MEDIADESK_SESSION_LOG.
# gnome-keyring 42-50 aborts when clients connect and leave quickly side by side (upstream
# gnome-keyring#196); D-Bus then starts it again for the next call, and its own service file would
# start it locked. This session's service file starts it unlocked, first and after any such crash.
set -euo pipefail
# A session inside another's writes to its log, and leaves it to that one to remove.
log_ours=''
if [ -z "${MEDIADESK_SESSION_LOG:-}" ]; then
  MEDIADESK_SESSION_LOG="$(mktemp -t mediadesk-dbus.XXXXXX)"
  log_ours=1
fi
export MEDIADESK_SESSION_LOG
here="$(cd "$(dirname "$0")" && pwd)"
session_home="$(mktemp -d)"
mkdir "$session_home/services"
# A file "locked" in the session's HOME: the next daemon starts as Debian's own service file starts it,
# its keyring locked (what a test of a keychain nobody unlocked makes).
cat >"$session_home/keyring.sh" <<SCRIPT
#!/bin/sh
if [ -e "$session_home/locked" ]; then
  exec gnome-keyring-daemon --foreground --components=secrets >/dev/null 2>>"\$MEDIADESK_SESSION_LOG"
fi
printf pw | exec gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null 2>>"\$MEDIADESK_SESSION_LOG"
SCRIPT
chmod +x "$session_home/keyring.sh"
printf '[D-BUS Service]\nName=org.freedesktop.secrets\nExec=%s\n' "$session_home/keyring.sh" \
  >"$session_home/services/org.freedesktop.secrets.service"
# The session bus as Debian configures it, with this session's services found first.
cat >"$session_home/session.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <servicedir>$session_home/services</servicedir>
  <include>/usr/share/dbus-1/session.conf</include>
</busconfig>
CONF
# The throwaway HOME (its keyring) goes with the session; the log stays only if the command failed.
trap 'rm -rf "$session_home"' EXIT
status=0
HOME="$session_home" dbus-run-session --config-file="$session_home/session.conf" \
  --dbus-daemon="$here/dbus-daemon-logged.sh" -- sh -c '
  # Started before the command, so its first call meets an unlocked keyring rather than starting one.
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.StartServiceByName string:org.freedesktop.secrets uint32:0 >/dev/null 2>>"$MEDIADESK_SESSION_LOG" || true
  exec "$@"' sh "$@" || status=$?
if [ "$status" -eq 0 ] && [ -n "$log_ours" ]; then rm -f "$MEDIADESK_SESSION_LOG"; fi
exit "$status"
