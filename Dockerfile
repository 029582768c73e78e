# sessiond: multi-stage image. The runtime stage holds production dependencies
# only and runs as the unprivileged `node` user with its data on a volume.

FROM node:20-bookworm-slim AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig*.json ./
COPY gen ./gen
COPY src ./src
RUN npm run build

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY gen ./gen
COPY proto ./proto
COPY src ./src
# Copied last so the build stamp is newer than the sources: bin/sessiond.js runs dist/.
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 50051
ENTRYPOINT ["node", "bin/sessiond.js"]
# Without --auth-tokens the server refuses a non-loopback address: mount a
# tokens file and pass --auth-tokens, or pass --insecure on a private network.
CMD ["serve", "--listen", "0.0.0.0:50051", "--data-dir", "/data"]

# The integration-test runner used by docker-compose's `integration` service:
# the full dev toolchain plus the Python and Go clients' toolchains (Debian's
# grpcio / protobuf for Python, Go with Debian's grpc-go / protobuf-go sources)
# and openssl for the TLS tests.
FROM node:20-bookworm-slim AS integration
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3-grpcio python3-protobuf python3-venv \
    python3-pip protobuf-compiler golang-go golang-google-grpc-dev golang-google-protobuf-dev \
    golang-github-golang-protobuf-1-5-dev openssl \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
ENTRYPOINT ["npx", "vitest", "run", "test/integration"]
