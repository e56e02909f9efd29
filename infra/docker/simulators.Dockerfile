# syntax=docker/dockerfile:1
# The ERP and payment-provider simulators (development, demos, compose) in one image; the command picks one:
#   docker build -f infra/docker/simulators.Dockerfile -t sports-timing/simulators:1.0.0 .
#   CMD erp:     node --conditions=dist packages/erp-simulator/dist/main.js      (ERP_SIMULATOR_PORT 8090)
#   CMD payment: node --conditions=dist packages/payment-simulator/dist/main.js  (PAYMENT_SIMULATOR_PORT 8091)
# Never deploy these next to real tenants: they accept development tokens.
ARG NODE_IMAGE=node:20-slim

FROM ${NODE_IMAGE} AS base
ENV COREPACK_ENABLE_DOWNLOAD_PROMPT=0 COREPACK_INTEGRITY_KEYS=0 PNPM_HOME=/pnpm
RUN corepack enable
WORKDIR /src

FROM base AS build
COPY . .
RUN --mount=type=cache,id=pnpm,target=/pnpm/store pnpm install --frozen-lockfile --filter "@sports-timing/erp-simulator..." --filter "@sports-timing/payment-simulator..."
RUN pnpm build packages/shared packages/erp-simulator packages/payment-simulator

FROM base AS prod-deps
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json .npmrc ./
COPY packages/shared/package.json packages/shared/
COPY packages/erp-simulator/package.json packages/erp-simulator/
COPY packages/payment-simulator/package.json packages/payment-simulator/
RUN --mount=type=cache,id=pnpm,target=/pnpm/store pnpm install --frozen-lockfile --prod --filter "@sports-timing/erp-simulator..." --filter "@sports-timing/payment-simulator..."

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production HOST=0.0.0.0
WORKDIR /app
COPY --from=prod-deps --chown=node:node /src /app
COPY --from=build --chown=node:node /src/packages/shared/dist packages/shared/dist
COPY --from=build --chown=node:node /src/packages/erp-simulator/dist packages/erp-simulator/dist
COPY --from=build --chown=node:node /src/packages/payment-simulator/dist packages/payment-simulator/dist
USER node
EXPOSE 8090 8091
CMD ["node", "--conditions=dist", "--enable-source-maps", "packages/erp-simulator/dist/main.js"]
