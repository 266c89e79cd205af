#!/usr/bin/env bash
# Renders docs/diagrams/*.dot (Graphviz sources, the text the diagrams are
# made from) to the SVGs committed beside them and used by docs/. Run after
# editing a .dot file; installs Debian's graphviz if it is missing.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
scripts/deps.sh graphviz fonts-dejavu-core
for src in docs/diagrams/*.dot; do
  dot -Tsvg "$src" -o "${src%.dot}.svg"
  echo "wrote ${src%.dot}.svg"
done
