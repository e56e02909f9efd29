# syntax=docker/dockerfile:1
# The ordering service as a container image. Build from the repository root:
#   docker build -f infra/docker/ordering.Dockerfile -t sports-timing/ordering:1.0.0 .
# Stages: build (all dependencies, `pnpm build` of the service and the workspace packages it imports) →
# prod-deps (production dependencies only, same workspace layout) → runtime (node:20-slim, non-root, no
# compiler, no TypeScript sources). The layout under /app mirrors the repository, because the code finds the
# spec and its assets relative to its own files (services/ordering/dist → ../../../specs).
ARG NODE_IMAGE=node:20-slim

FROM ${NODE_IMAGE} AS base
ENV COREPACK_ENABLE_DOWNLOAD_PROMPT=0 COREPACK_INTEGRITY_KEYS=0 PNPM_HOME=/pnpm
RUN corepack enable
WORKDIR /src

FROM base AS build
COPY . .
RUN --mount=type=cache,id=pnpm,target=/pnpm/store pnpm install --frozen-lockfile --filter "@sports-timing/ordering..."
RUN pnpm build services/ordering packages/shared

FROM base AS prod-deps
# Manifests only: the production install does not change when only source files do (layer cache).
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json .npmrc ./
COPY packages/shared/package.json packages/shared/
COPY services/ordering/package.json services/ordering/
RUN --mount=type=cache,id=pnpm,target=/pnpm/store pnpm install --frozen-lockfile --prod --filter "@sports-timing/ordering..."

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 ORDERING_PORT=8080 DATA_DIR=/var/lib/sports-timing APP_ENV=production DEMO_DATA=false
WORKDIR /app
RUN mkdir -p /var/lib/sports-timing && chown node:node /var/lib/sports-timing
COPY --from=prod-deps --chown=node:node /src /app
COPY --from=build --chown=node:node /src/packages/shared/dist packages/shared/dist
COPY --from=build --chown=node:node /src/services/ordering/dist services/ordering/dist
COPY --from=build --chown=node:node /src/specs/ordering.yaml specs/ordering.yaml

USER node
EXPOSE 8080
# Liveness through the service's own /healthz (the slim image has no curl; node's fetch does it).
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.ORDERING_PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Migrations only (Kubernetes Job, release step): docker run … node --conditions=dist services/ordering/dist/migrate.js
CMD ["node", "--conditions=dist", "--enable-source-maps", "services/ordering/dist/server.js"]
