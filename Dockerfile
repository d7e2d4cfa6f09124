# syntax=docker/dockerfile:1
# runset's image: the API (`serve`), the demo, and workers (`worker --url …`) from one image.
#   docker build -t runset .
#   docker run -p 8080:8080 -v runset-data:/data runset                     # the demo (no config mounted)
#   docker run -p 8080:8080 -v runset-data:/data -v "$PWD:/suite:ro" runset  # your suite's runset.config.yaml
# docs/deploy.md ("The container image") walks through it; test/deploy/dockerfile.test.ts checks this file.

# ---- build: compile TypeScript and the dashboard, then keep production dependencies only ----
FROM node:20-bookworm AS build
WORKDIR /src
# Dependencies first, so that a change to the sources reuses this layer. Scripts off: the
# package's own `prepare` would build before the sources are here; `npm rebuild` then runs the
# dependencies' install scripts (better-sqlite3's native module; python3, make and g++ are in this stage).
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild
COPY . .
RUN npm run build && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

# ---- runtime: Node 20 slim, Debian's Chromium, tini, a non-root user ----
FROM node:20-bookworm-slim AS runtime
# chromium: Playwright suites run on the system browser (nothing is downloaded at run time);
# tini: PID 1 that forwards SIGTERM to node and reaps the orphans that test processes leave.
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium tini ca-certificates fonts-liberation \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 runset \
 && useradd --system --uid 10001 --gid 10001 --create-home --home-dir /home/runset --shell /usr/sbin/nologin runset \
 && mkdir -p /data /suite \
 && chown runset:runset /data

ENV NODE_ENV=production \
    RUNSET_HOST=0.0.0.0 \
    RUNSET_PORT=8080 \
    RUNSET_DATA_DIR=/data \
    RUNSET_CHROMIUM=/usr/bin/chromium

WORKDIR /app
# The application is root's and read-only to runset's user; only /data (and $HOME's caches) are its own.
COPY --from=build /src/package.json /src/package-lock.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist/src ./dist/src
COPY --from=build /src/dist/dashboard ./dist/dashboard
COPY --from=build /src/examples ./examples
COPY deploy/image/entrypoint.sh /usr/local/bin/runset-entrypoint
COPY deploy/image/healthcheck.mjs /app/healthcheck.mjs
RUN chmod 0755 /usr/local/bin/runset-entrypoint \
 && ln -s /app/dist/src/cli/main.js /usr/local/bin/runset \
 && chmod 0755 /app/dist/src/cli/main.js

# A suite mounted here is served without RUNSET_CONFIG: runset reads ./runset.config.yaml.
WORKDIR /suite
USER 10001:10001
VOLUME ["/data"]
EXPOSE 8080
# GET /api/health on the API's port; a worker container (no API) is healthy while it runs.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "/app/healthcheck.mjs"]

# Exec form throughout: tini is PID 1, the entrypoint script `exec`s node, so SIGTERM reaches
# runset itself, which drains (src/cli/signals.ts: finish in-flight runs within --grace, exit 0).
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/runset-entrypoint"]
# No arguments: `serve` when a config is there (RUNSET_CONFIG or /suite/runset.config.yaml), else `demo`.
# Any arguments are runset's: `docker run … runset worker --url https://runset.example.com/api --key-file /run/secrets/worker.key`.
CMD []
