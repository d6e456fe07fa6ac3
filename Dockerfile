# One image for every service of docker-compose.yml: the x402-tally command line.
# TypeScript runs through tsx (a runtime dependency), so there is no build step.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY sql ./sql
COPY fixtures ./fixtures
USER node
ENTRYPOINT ["node", "bin/x402-tally.js"]
CMD ["--help"]
