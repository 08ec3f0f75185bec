#!/usr/bin/env bash
# Installs what is missing, builds, makes sure a token exists (printing it), and
# starts the service on the embedded default: SQLite + local files under ./data.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
cargo build --release --locked

data_dir="${MEDIAEDIT_DATA_DIR:-./data}"
mkdir -p "$data_dir"
token_file="$data_dir/dev-token"
if [ ! -s "$token_file" ]; then
  # Tokens are stored only as hashes, so the development token is kept here to be
  # printed again on the next start.
  (umask 077 && ./target/release/mediaedit token create --data-dir "$data_dir" --org "${MEDIAEDIT_ORG:-dev}" | tail -n 1 > "$token_file")
fi
echo "API token: $(cat "$token_file")"
echo "Playground: http://${MEDIAEDIT_LISTEN:-127.0.0.1:8080}/ (paste the token at the top right)"
echo "Try: curl -s -H \"Authorization: Bearer \$(cat $token_file)\" http://${MEDIAEDIT_LISTEN:-127.0.0.1:8080}/v1/edits/none"
exec ./target/release/mediaedit serve --data-dir "$data_dir" "$@"
