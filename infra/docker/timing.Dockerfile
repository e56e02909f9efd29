# syntax=docker/dockerfile:1
# The timing service as a container image. Build from the repository root:
#   docker build -f infra/docker/timing.Dockerfile -t sports-timing/timing:1.0.0 .
# Stages: build (all dependencies, `pnpm build` of the service and the workspace packages it imports) →
# prod-deps (production dependencies only, same workspace layout) → runtime (node:20-slim, non-root, no
# compiler, no TypeScript sources). The layout under /app mirrors the repository, because the code finds the
# spec and its assets relative to its own files (services/timing/dist → ../../../specs).
ARG NODE_IMAGE=node:20-slim

FROM ${NODE_IMAGE} AS base
ENV COREPACK_ENABLE_DOWNLOAD_PROMPT=0 COREPACK_INTEGRITY_KEYS=0 PNPM_HOME=/pnpm
RUN corepack enable
WORKDIR /src

FROM base AS build
COPY . .
RUN --mount=type=cache,id=pnpm,target=/pnpm/store pnpm install --frozen-lockfile --filter "@sports-timing/timing..."
RUN pnpm build services/timing packages/shared

FROM base AS prod-deps
# Manifests only: the production install does not change when only source files do (layer cache).
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json .npmrc ./
COPY packages/shared/package.json packages/shared/
COPY services/timing/package.json services/timing/
RUN --mount=type=cache,id=pnpm,target=/pnpm/store pnpm install --frozen-lockfile --prod --filter "@sports-timing/timing..."

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 TIMING_PORT=8081 DATA_DIR=/var/lib/sports-timing APP_ENV=production DEMO_DATA=false
WORKDIR /app
RUN mkdir -p /var/lib/sports-timing && chown node:node /var/lib/sports-timing
COPY --from=prod-deps --chown=node:node /src /app
COPY --from=build --chown=node:node /src/packages/shared/dist packages/shared/dist
COPY --from=build --chown=node:node /src/services/timing/dist services/timing/dist
COPY --from=build --chown=node:node /src/specs/timing.yaml specs/timing.yaml
COPY --from=build --chown=node:node /src/services/timing/demo services/timing/demo
COPY --from=build --chown=node:node /src/services/timing/web services/timing/web
USER node
EXPOSE 8081
# Liveness through the service's own /healthz (the slim image has no curl; node's fetch does it).
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.TIMING_PORT || 8081) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Migrations only (Kubernetes Job, release step): docker run … node --conditions=dist services/timing/dist/migrate.js
CMD ["node", "--conditions=dist", "--enable-source-maps", "services/timing/dist/server.js"]
