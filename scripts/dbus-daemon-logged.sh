#!/bin/sh
# dbus-daemon with its stderr in the session's log (keyring-session.sh starts it through dbus-run-session).
exec dbus-daemon "$@" 2>>"${MEDIADESK_SESSION_LOG:-/dev/null}"
