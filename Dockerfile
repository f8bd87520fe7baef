# Production image: compiled JavaScript on Node 22, no dev dependencies. The operator CLIs ship compiled:
#   docker exec CONTAINER node dist/admin/keys-cli.js create --label alice
#   docker exec CONTAINER node dist/admin/payments-cli.js summary
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:22-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/app/data API_KEYS_FILE=/app/data/api-keys.json
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
# DATA_DIR: the embedded database (payments ledger and API keys), the admin socket the CLIs use (docker
# exec runs them as `node`, the socket's owner), and a key file of earlier versions to import once
# (API_KEYS_FILE), writable by the server's user. Mount a volume here to keep them across containers (or
# set DATABASE_URL to a PostgreSQL server, as compose.yaml does).
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME /app/data
USER node
EXPOSE 3000
CMD ["node", "dist/server.js"]
