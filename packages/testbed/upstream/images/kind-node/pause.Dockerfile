# The pod sandbox image: Kubernetes' pause program (build/pause/linux/pause.c of the pinned release), compiled
# statically on this machine by scripts/kind-node-image.mjs.
ARG STATIC_IMAGE=gcr.io/distroless/static-debian12
FROM ${STATIC_IMAGE}
COPY pause /pause
USER 65535:65535
ENTRYPOINT ["/pause"]
