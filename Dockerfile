# The ladder container image: one static binary on a minimal base, for `deploy/k8s/`.
#
#   docker build -t ghcr.io/<you>/ladder:0.1.0 .
#   docker push ghcr.io/<you>/ladder:0.1.0      # then set `image:` in deploy/k8s/*-job.yaml
#
# Stage 1 builds on Alpine, where Rust's target is x86_64/aarch64-unknown-linux-musl and links
# statically by default: the binary needs no libc at run time. TLS is rustls with the Mozilla
# root certificates compiled in (webpki-roots), so no OpenSSL and no CA bundle are needed.
# `ring` (rustls' crypto) has some C and assembly, hence gcc and musl-dev.
# Pin the Rust version for reproducible images (any version >= the lockfile's needs works).
FROM rust:1-alpine AS build
RUN apk add --no-cache gcc musl-dev
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin ladder \
 && strip target/release/ladder \
 && ./target/release/ladder --version

# Stage 2: distroless "static" (no shell, no package manager; /etc/passwd with the `nonroot`
# user 65532, /tmp, tzdata). A few MB besides the binary.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/target/release/ladder /usr/local/bin/ladder
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/ladder"]
CMD ["--help"]
