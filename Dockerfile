# The ladder container image: one static binary on a minimal base, for `deploy/k8s/`.
#
#   docker build -t ghcr.io/<you>/ladder:0.1.0 --build-arg VERSION=v0.1.0 .
#   docker push ghcr.io/<you>/ladder:0.1.0      # then set `image:` in deploy/k8s/*-job.yaml
#
# By default the image holds a release binary: the static musl build that
# .github/workflows/release.yml attaches to the GitHub release VERSION (`latest`, or a tag such
# as v0.1.0), checked against the release's SHA256SUMS. For the platform being built (amd64 or
# arm64, so `docker buildx build --platform linux/amd64,linux/arm64` works). With
# `--build-arg FROM=source` it is built from this checkout instead (Alpine, where Rust's
# *-unknown-linux-musl targets link statically by default), e.g. for an unreleased commit.
# TLS is rustls with the Mozilla roots compiled in, so the image needs no CA bundle.
ARG FROM=release

FROM alpine:3.20 AS release
ARG VERSION=latest
ARG RELEASES=https://github.com/ladder-llm/ladder/releases
ARG TARGETARCH
RUN apk add --no-cache curl
WORKDIR /fetch
RUN set -eu; \
    case "${TARGETARCH:-amd64}" in \
      amd64) target=x86_64-unknown-linux-musl ;; \
      arm64) target=aarch64-unknown-linux-musl ;; \
      *) echo "no ladder release for $TARGETARCH" >&2; exit 1 ;; \
    esac; \
    if [ "$VERSION" = latest ]; then base="$RELEASES/latest/download"; else base="$RELEASES/download/$VERSION"; fi; \
    curl -fsSL -O "$base/ladder-$target.tar.gz" -O "$base/SHA256SUMS"; \
    grep " ladder-$target.tar.gz\$" SHA256SUMS | sha256sum -c -; \
    tar -xzf "ladder-$target.tar.gz" ladder; \
    mkdir -p /out && mv ladder /out/ladder && /out/ladder --version

FROM rust:1-alpine AS source
RUN apk add --no-cache gcc musl-dev
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin ladder \
 && mkdir -p /out && cp target/release/ladder /out/ladder && /out/ladder --version

FROM ${FROM} AS binary

# distroless "static": no shell, no package manager; /etc/passwd with the `nonroot` user 65532,
# /tmp, tzdata. A few MB besides the binary.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=binary /out/ladder /usr/local/bin/ladder
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/ladder"]
CMD ["--help"]
