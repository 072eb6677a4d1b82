# The haroute image: the static binary alone, run as a non-root user; nothing else (no shell, no
# HAProxy: that runs in its own container from the stock image, see manifests/).
#
# The binary is built outside, so that building the image pulls nothing from a registry:
#   make image        (builds bin/haroute-static, then the image with podman or docker)
FROM scratch
# On PATH, so that `kubectl exec deploy/haroute -c haroute -- haroute state` finds it.
COPY --chmod=0755 bin/haroute-static /usr/local/bin/haroute
ENV PATH=/usr/local/bin
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/haroute"]
