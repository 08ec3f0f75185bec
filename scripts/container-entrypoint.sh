#!/bin/sh
# The image's entry point: `podman run IMAGE token create --org acme` and
# `podman run IMAGE mediaedit token create --org acme` both run mediaedit, and any
# other command (`sh`, `ffprobe`) runs as given.
set -e
case "${1:-}" in
  serve|token|webhook-secret|edit|help|-*) exec mediaedit "$@" ;;
  *) exec "$@" ;;
esac
