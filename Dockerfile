# syntax=docker/dockerfile:1
# People Service: build with the dev toolchain, run with production dependencies only.

FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json ./
COPY packages ./packages
# The compiler needs no install scripts: they would build better-sqlite3-12,
# the dev dependency for Node 20 machines, and the test runner's plugins.
RUN npm ci --ignore-scripts --no-audit --no-fund && npx tsc -b packages/server

FROM node:24-slim AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/domain/package.json packages/domain/
COPY packages/client/package.json packages/client/
COPY packages/infra/package.json packages/infra/
COPY packages/http/package.json packages/http/
COPY packages/server/package.json packages/server/
# --ignore-scripts skips the root `prepare` (a test-runner step). The one
# native module, better-sqlite3 13, ships prebuilt Node-API binaries: no
# compiler in the image.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:24-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATABASE_URL=sqlite:/data/people.db
WORKDIR /app
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/package.json ./
COPY --from=build /app/packages/domain/package.json ./packages/domain/
COPY --from=build /app/packages/domain/dist ./packages/domain/dist
COPY --from=build /app/packages/infra/package.json ./packages/infra/
COPY --from=build /app/packages/infra/dist ./packages/infra/dist
COPY --from=build /app/packages/http/package.json ./packages/http/
COPY --from=build /app/packages/http/dist ./packages/http/dist
COPY --from=build /app/packages/http/static ./packages/http/static
COPY --from=build /app/packages/server/package.json ./packages/server/
COPY --from=build /app/packages/server/dist ./packages/server/dist
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
VOLUME ["/data"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node directly, not npm: signals reach the server, which shuts down gracefully.
# A 16 MB semi-space keeps V8's young generation at Node 20's size: on Node 24
# it grows to 128 MB and takes the server past 300 MB RSS (docs/OPERATIONS.md).
CMD ["node", "--max-semi-space-size=16", "packages/server/dist/main.js"]
