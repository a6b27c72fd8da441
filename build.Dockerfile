# The build stage every Switchyard image starts from (apps/*/Dockerfile, lab/Dockerfile): the repository with its
# npm dependencies installed, nothing compiled yet. Build it first, from the repository root:
#   docker build -f build.Dockerfile -t switchyard/build:dev .
# `npm run images` (scripts/images.mjs) does, before the images that name it in `ARG BUILD_IMAGE`; where no
# registry answers it passes a local equivalent of the base image below as NODE_IMAGE (docs/images.md).

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE}
# The proxier's build compiles its eBPF programs (packages/proxier/bpf) with clang against libbpf's headers.
RUN apt-get update \
 && apt-get install -y --no-install-recommends clang libbpf-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Manifests first, so a source change does not rerun npm ci. Every workspace's package.json must be present
# for `npm ci` to accept the lockfile (a new workspace needs a line here).
COPY package.json package-lock.json turbo.json tsconfig.base.json ./
COPY packages/basics/package.json packages/basics/
COPY packages/kube/package.json packages/kube/
COPY packages/proxier/package.json packages/proxier/
COPY packages/resolver/package.json packages/resolver/
COPY packages/slice-controller/package.json packages/slice-controller/
COPY packages/testbed/package.json packages/testbed/
COPY apps/cluster-dns/package.json apps/cluster-dns/
COPY apps/kube-proxy/package.json apps/kube-proxy/
COPY apps/slice-controller/package.json apps/slice-controller/
COPY lab/package.json lab/
# Build time only: PEM certificates npm should trust besides its own, for networks that intercept TLS
# (`npm run images` passes the host's /usr/local/share/ca-certificates). Empty by default; they stay in this
# image and never reach a runtime image.
ARG EXTRA_CA_CERTS=""
RUN if [ -n "$EXTRA_CA_CERTS" ]; then printf '%s\n' "$EXTRA_CA_CERTS" >/tmp/extra-ca.pem \
      && export NODE_EXTRA_CA_CERTS=/tmp/extra-ca.pem; fi \
 && npm ci --no-audit --no-fund --ignore-scripts
COPY packages/ packages/
COPY apps/ apps/
COPY lab/ lab/
ENV TURBO_TELEMETRY_DISABLED=1
# Each app's image then compiles what it runs (turbo, --filter=<app>...) and keeps production dependencies
# only, without their type declarations and source maps (nothing reads them at run time; ~38 MB, most of it
# @kubernetes/client-node's). node_modules/ holds only symlinks to the workspaces, which find does not follow,
# so their dist/ stays whole.
