#!/usr/bin/env bash
# make stress: git-synaptic under ordinary git life, bounded, not in CI.
#
# Phase 1: STRESS_WRITERS writers × STRESS_SAVES saves each, while a search
# loop, a sync loop (to a bare remote) and `git repack -a -d` every second
# run beside them. Phase 1b: two writers with `git gc --prune=now` every
# second; status must not find memory damaged. Phase 2: STRESS_KILLS commands (save, import, sync,
# reindex) killed with SIGKILL at a random instant. Then: every id a save
# printed must be in the ref, the cache must equal the ref, git fsck must be
# clean, and no command may have failed on its own.
#
# Usage: scripts/stress.sh [BINARY]   (default bin/git-synaptic)
set -u
bin=$(realpath "${1:-bin/git-synaptic}")
W=${STRESS_WRITERS:-8}
N=${STRESS_SAVES:-500}
K=${STRESS_KILLS:-200}
root=$(mktemp -d)
bg=()
cleanup() { for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$root"; }
trap cleanup EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME="$root/home" GIT_AUTHOR_NAME=stress GIT_AUTHOR_EMAIL=stress@example.com GIT_COMMITTER_NAME=stress GIT_COMMITTER_EMAIL=stress@example.com
mkdir -p "$HOME"
fail="$root/failures"
: >"$fail"
git init -q --bare -b main "$root/remote.git"
git init -q -b main "$root/a"
cd "$root/a" || exit 1
git commit -q --allow-empty -m initial
git remote add origin "$root/remote.git"
git push -q origin main
"$bin" init >/dev/null || { echo "init failed"; exit 1; }

echo "phase 1: $W writers × $N saves, with search, sync and git repack -a -d every second"
start=$(date +%s)
writers=()
writer() { # ids file suffix, saves, what the entries say
	local id=$1 saves=$2 text=$3
	for i in $(seq "$saves"); do
		if out=$("$bin" save "$text $i" 2>>"$root/err.save"); then
			echo "$out" >>"$root/ids.$id"
		else
			echo "save $id/$i exited $?" >>"$fail"
		fi
	done
}
for w in $(seq "$W"); do
	writer "$w" "$N" "writer $w about the cache, the pool and retries, entry" &
	writers+=($!)
done
loop() { # name, sleep, command...
	local name=$1 pause=$2
	shift 2
	while [ ! -e "$root/stop" ]; do
		"$@" >/dev/null 2>>"$root/err.$name" || echo "$name exited $?" >>"$fail"
		sleep "$pause"
	done
}
loop search 0 "$bin" search "cache pool retries" --mode bm25 -n 5 &
bg+=($!)
loop sync 0.2 "$bin" sync &
bg+=($!)
loop repack 1 git repack -a -d -q &
bg+=($!)
wait "${writers[@]}"
touch "$root/stop"
wait "${bg[@]}"
bg=()
echo "  took $(($(date +%s) - start)) s; $(cat "$root"/ids.* | wc -l) saves printed an id"

echo "phase 1b: 2 writers × $((N / 4)) saves with git gc --prune=now every second"
rm -f "$root/stop" # else the gc loop ends before it starts
writers=()
for w in 1 2; do
	writer "prune$w" $((N / 4)) "pruned writer $w entry" &
	writers+=($!)
done
loop gc 1 git gc --prune=now -q &
bg+=($!)
wait "${writers[@]}"
touch "$root/stop"
wait "${bg[@]}"
bg=()
rm -f "$root/stop"
"$bin" status >"$root/status.prune" 2>&1 || { echo "status after gc --prune=now exited $?:" >>"$fail"; grep DAMAGED "$root/status.prune" >>"$fail"; }

echo "phase 2: $K commands killed with SIGKILL at a random instant"
printf '{"content":"imported entry %s"}\n' $(seq 200) >"$root/import.jsonl"
killed_ids="$root/ids.killed"
for k in $(seq "$K"); do
	case $((k % 4)) in
	0) cmd=(save "killed save $k") ;;
	1) cmd=(import "$root/import.jsonl") ;;
	2) cmd=(sync) ;;
	3) cmd=(reindex) ;;
	esac
	"$bin" "${cmd[@]}" >"$root/out.$k" 2>/dev/null &
	p=$!
	sleep "0.$(printf '%03d' $((RANDOM % 400)))"
	kill -9 "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	# A save that printed its id before the kill promised that entry.
	if [ "${cmd[0]}" = save ] && [ -s "$root/out.$k" ]; then cat "$root/out.$k" >>"$killed_ids"; fi
done

echo "checks"
# Any command may now meet a lock a kill left; it must clean it and go on.
"$bin" save "after the kills" >>"$root/ids.after" 2>>"$root/err.save" || echo "save after the kills exited $?" >>"$fail"
"$bin" sync >/dev/null 2>>"$root/err.sync" || echo "final sync exited $?" >>"$fail"
status=$("$bin" status --json 2>>"$root/err.status") || echo "status exited $?" >>"$fail"
repaired=$(printf '%s' "$status" | grep -o '"repaired":\[[^]]*\]' || true)
[ -z "$repaired" ] || echo "status found the cache drifted: $repaired" >>"$fail"
ref_ids="$root/ref.ids"
git ls-tree -r --name-only refs/synaptic/memory | sed -n 's|^entries/../\(.*\)\.json$|\1|p' | sort >"$ref_ids"
missing=$(cat "$root"/ids.* | sort -u | comm -23 - "$ref_ids" | wc -l)
[ "$missing" = 0 ] || echo "$missing printed ids are not in the ref" >>"$fail"
"$bin" list --json -n 0 --include-archived 2>/dev/null | sed -n 's/^    "id": "\([0-9a-f]*\)",$/\1/p' | sort >"$root/cache.ids"
cached=$(comm -12 "$ref_ids" "$root/cache.ids" | wc -l)
inref=$(wc -l <"$ref_ids")
[ "$cached" = "$inref" ] || echo "the cache lists $cached of the $inref entries in the ref" >>"$fail"
git fsck --strict --no-progress >"$root/fsck" 2>&1 || { echo "git fsck failed:" >>"$fail"; cat "$root/fsck" >>"$fail"; }
remote_missing=$(git -C "$root/remote.git" ls-tree -r --name-only refs/synaptic/memory | sed -n 's|^entries/../\(.*\)\.json$|\1|p' | sort | comm -13 - "$ref_ids" | wc -l)

echo "  entries in the ref: $inref (printed ids: $(cat "$root"/ids.* | sort -u | wc -l), missing: $missing)"
echo "  entries in the cache: $cached; on the remote after the final sync, missing: $remote_missing"
echo "  warnings: $(cat "$root"/err.* 2>/dev/null | grep -c 'stale lock') stale locks removed, $(cat "$root"/err.* 2>/dev/null | grep -c 'rebuilding') cache rebuilds"
if [ -s "$fail" ]; then
	echo "FAILED: $(wc -l <"$fail") failures"
	sort "$fail" | uniq -c | sort -rn | head -20
	echo "stderr samples:"
	cat "$root"/err.* | grep -v "^note: near-duplicate" | sort | uniq -c | sort -rn | head -10
	exit 1
fi
echo "stress: ok"
