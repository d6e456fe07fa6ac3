# One image for every service of docker-compose.yml: the x402-tally command line.
# TypeScript runs through tsx (a runtime dependency), so there is no build step.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# `npm ci` refuses the current package-lock.json: it lacks entries for @foundry-rs/anvil's other
# platform packages (darwin, win32, linux-arm64), which the registry this lock was made with did
# not serve. `npm install` keeps every version the lock pins and resolves only those.
# Switch back to `npm ci --omit=dev` once the lock is regenerated against the public registry.
RUN npm install --omit=dev --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY sql ./sql
COPY fixtures ./fixtures
# The compiled x402 stand-in contracts the local demo chain can place (src/devchain/x402-contracts.ts).
COPY contracts ./contracts
# `audit` runs the command line compiled to plain JavaScript (bin/compiled.js), kept in .build/:
# made here, since /app is not writable by the user the container runs as.
RUN node --input-type=module -e "import { compiledCli } from './bin/compiled.js'; if (!compiledCli()) process.exit(1)"
USER node
ENTRYPOINT ["node", "bin/x402-tally.js"]
CMD ["--help"]
