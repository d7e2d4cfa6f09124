#!/bin/bash
# Builds runset's image with podman and runs it, on a machine like runset's development
# machine (Debian 12, root, no Docker Hub, a TLS-intercepting proxy in front of the npm
# registry, a sandbox that refuses raising RLIMIT_NOFILE and runs cgroup v1 + an empty v2).
# Not part of `npm test`: it takes minutes and needs root. docs/deploy.md ("What is
# verified, and what is not") says what it checks and what this machine needed.
#   apt-get install podman buildah runc debootstrap   # once
#   bash deploy/image/try-here.sh                      # from the repository's root
# Environment: WORK (stand-in images and build files, default /var/tmp/runset-image),
# IMAGE (default runset:try), PORT (the API's port on the host network, default 18080).
set -eu
WORK=${WORK:-/var/tmp/runset-image}
IMAGE=${IMAGE:-runset:try}
PORT=${PORT:-18080}
API="http://127.0.0.1:$PORT/api"
# runc, not crun (crun refuses cgroup v1 with a v2 mount beside it); limits the sandbox lets
# runc set (podman's default RLIMIT_NOFILE 1048576 is over the hard limit, and it refused
# RLIMIT_NPROC at the hard limit 96364 where 20000 passed).
LIMITS="--runtime runc --ulimit nofile=$(ulimit -Hn):$(ulimit -Hn) --ulimit nproc=20000:20000"
step() { printf '\n== %s\n' "$*"; }
fail() { printf 'FAILED: %s\n' "$*" >&2; exit 1; }
mkdir -p "$WORK"

# 1. Stand-ins for node:20-bookworm(-slim) (Docker Hub is out of reach): a debootstrap
#    bookworm with this machine's Node 20 and npm laid out as the official images do.
standin() { # tag, extra Debian packages
  podman image exists "node:$1" && return 0
  step "stand-in node:$1"
  root="$WORK/rootfs-$1"
  rm -rf "$root"
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$WORK/debootstrap-$1.log"
  mkdir -p "$root/usr/local/bin" "$root/usr/local/lib/node_modules" "$root/usr/local/include"
  cp "$(command -v node)" "$root/usr/local/bin/node"
  cp -a /usr/lib/node_modules/npm "$root/usr/local/lib/node_modules/"
  cp -a /usr/include/node "$root/usr/local/include/node"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  chroot "$root" groupadd --gid 1000 node
  chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  printf 'deb http://deb.debian.org/debian bookworm main\ndeb http://deb.debian.org/debian bookworm-updates main\ndeb http://deb.debian.org/debian-security bookworm-security main\n' >"$root/etc/apt/sources.list"
  if [ -n "$2" ]; then
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive chroot "$root" \
      sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends $2" >"$WORK/apt-$1.log"
    : >"$root/etc/resolv.conf"
  fi
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
  tar -C "$root" -c . | podman import --change 'ENV NODE_VERSION=20' --change 'CMD ["node"]' - "node:$1" >/dev/null
}
standin 20-bookworm-slim ''
standin 20-bookworm 'ca-certificates curl git python3 make g++ procps'

# 2. The build. Build-time only, nothing of it in the Dockerfile or the image: one directory
#    bind-mounted over the base images' empty /usr/local/etc (a mount over a path that does not
#    exist would leave an empty file behind in the layer), holding the host's CA bundle and an
#    npm config naming it (the proxy) and taking node-gyp's headers from the base image
#    (nodejs.org is out of reach). Host network for npm and apt. --format docker keeps
#    HEALTHCHECK (podman's default OCI format drops it).
step "podman build -t $IMAGE"
mkdir -p "$WORK/build-etc"
cp /etc/ssl/certs/ca-certificates.crt "$WORK/build-etc/host-ca.crt"
printf 'cafile=/usr/local/etc/host-ca.crt\nnodedir=/usr/local\n' >"$WORK/build-etc/npmrc"
podman build $LIMITS --format docker --network host --pull=never -v "$WORK/build-etc:/usr/local/etc:ro" \
  -t "$IMAGE" . >"$WORK/build.log" 2>&1 || { tail -20 "$WORK/build.log"; fail "build (log: $WORK/build.log)"; }
podman image inspect "$IMAGE" --format '{{.Size}} bytes; user {{.Config.User}}; healthcheck {{.Config.Healthcheck.Test}}'
[ -z "$(podman run --rm $LIMITS --entrypoint ls "$IMAGE" -A /usr/local/etc)" ] || fail 'the build-time npm config was left in the image'

# 3. The demo: a bare run (host network: the sandbox has no bridge networking to give).
cleanup() { podman rm -f -t 0 runset-try runset-try-worker >/dev/null 2>&1 || true; podman volume rm -f runset-try-data >/dev/null 2>&1 || true; }
trap cleanup EXIT
cleanup
step "podman run $IMAGE (demo)"
podman run -d --name runset-try $LIMITS --network host --shm-size 1g -e RUNSET_PORT="$PORT" -v runset-try-data:/data "$IMAGE" >/dev/null
for _ in $(seq 1 90); do podman logs runset-try 2>/dev/null | grep -q RUNSET_API_KEY= && break; sleep 1; done
KEY=$(podman logs runset-try 2>/dev/null | sed -n 's/.*RUNSET_API_KEY=\([^ ]*\).*/\1/p' | head -1)
[ -n "$KEY" ] || { podman logs runset-try; fail 'the demo printed no key'; }
podman exec runset-try sh -c 'echo "user $(id -u):$(id -g), /data $(stat -c %u:%g /data), PID 1 $(tr "\0" " " </proc/1/cmdline)"'
[ "$(podman exec runset-try stat -c %u /data)" = 10001 ] || fail '/data is not uid 10001'
curl -fsS "$API/health" && echo
podman healthcheck run runset-try && echo 'HEALTHCHECK: healthy'

# 4. A set to SUCCESS, its Playwright member on the image's Chromium.
step 'runset trigger --env demo --wait (inside the image)'
trigger() { # the set's members as "type status worker", one a line, in $WORK/members-$1
  podman exec -e RUNSET_URL="$API" -e RUNSET_API_KEY="$KEY" runset-try runset trigger --env demo --wait --interval 2s --json >"$WORK/set-$1.json" \
    || { cat "$WORK/set-$1.json"; fail "set $1 did not succeed"; }
  id=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).id' "$WORK/set-$1.json")
  curl -fsS "$API/v0/test-run-sets/$id/test-runs" -H "Authorization: Bearer $KEY" \
    | node -e 'let t = ""; process.stdin.on("data", (d) => (t += d)).on("end", () => { for (const r of JSON.parse(t).testRuns) console.log(r.type, r.status, r.workerId); });' >"$WORK/members-$1"
  cat "$WORK/members-$1"
}
trigger 0
grep -q '^playwright SUCCESS' "$WORK/members-0" || fail 'no Playwright member passed'

# 5. A worker from the same image, over HTTP with a key file, takes members of new sets.
step 'runset worker --url … --key-file … (a second container)'
podman exec runset-try runset keys create --name try-worker --role worker >"$WORK/worker.key"
chown 10001 "$WORK/worker.key" && chmod 400 "$WORK/worker.key"
podman run -d --name runset-try-worker $LIMITS --network host --shm-size 1g -v "$WORK/worker.key:/run/secrets/worker.key:ro" \
  "$IMAGE" worker --url "$API" --key-file /run/secrets/worker.key --workers 4 --grace 20s >/dev/null
sleep 5
podman healthcheck run runset-try-worker && echo 'HEALTHCHECK (worker container): healthy'
WORKER_ID=$(podman logs runset-try-worker 2>&1 | sed -n 's/^runset: worker \([^ ]*\) with.*/\1/p')
trigger 1 & trigger 2 & wait
for i in 1 2; do [ -s "$WORK/members-$i" ] && ! grep -qv ' SUCCESS ' "$WORK/members-$i" || fail "set $i did not succeed"; done
cat "$WORK/members-1" "$WORK/members-2" | grep -q " $WORKER_ID\$" || fail "the worker container ($WORKER_ID) ran no member"

# 6. SIGTERM reaches node and drains: the worker is stopped while a set runs (the set still
#    succeeds: its members finish within --grace or go back to the API's own workers), then the
#    API; both stop by themselves with status 0 (143 or 137 would be a kill).
step 'podman stop (SIGTERM) while a set runs'
trigger 3 & sleep 6
podman stop -t 45 runset-try-worker >/dev/null
wait
[ -s "$WORK/members-3" ] && ! grep -qv ' SUCCESS ' "$WORK/members-3" || fail 'the set under way when the worker stopped did not succeed'
podman logs runset-try-worker 2>&1 | grep -q '"signal":"SIGTERM"' || fail 'the worker logged no SIGTERM'
podman stop -t 45 runset-try >/dev/null
for c in runset-try-worker runset-try; do
  echo "$c: exit $(podman inspect "$c" --format '{{.State.ExitCode}}')"
  [ "$(podman inspect "$c" --format '{{.State.ExitCode}}')" = 0 ] || { podman logs --tail 10 "$c"; fail "$c did not exit 0 on SIGTERM"; }
done
step 'all checks passed'
