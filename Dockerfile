# ppcert in a small image: build with the Rust toolchain, run on a slim Debian with only the
# binary and CA certificates. The evidence bundle is written under /work/reports: mount it,
# and run as your own user so that the bundle is written to (and owned by) your directory:
#
#   docker build -t ppcert .
#   mkdir -p reports
#   docker run --rm --user "$(id -u):$(id -g)" -v "$PWD/reports:/work/reports" \
#     -e PPCERT_TOKEN -e PPCERT_BASE_URL ppcert run
#
# Without --user the image's own user (10001) runs it, which cannot write to a directory a
# host user owns. /work is writable by any user, so `--out` anywhere under it works too.
FROM rust:1-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY .cargo ./.cargo
COPY crates ./crates
COPY src ./src
COPY scenarios ./scenarios
COPY dialects ./dialects
COPY examples ./examples
# BuildKit cache mounts keep the downloaded crates and the compiled dependencies between builds,
# so a source change rebuilds ppcert only. The `dist` profile is the release binaries' (LTO,
# one codegen unit, stripped).
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --profile dist --locked --bin ppcert \
    && cp target/dist/ppcert /usr/local/bin/ppcert

FROM debian:bookworm-slim
# ca-certificates is left unpinned on purpose: it must track the distribution's security updates.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 ppcert \
    && mkdir -p /work/reports \
    && chmod 1777 /work /work/reports
COPY --from=build /usr/local/bin/ppcert /usr/local/bin/ppcert
USER 10001
WORKDIR /work
ENV CI=true
ENTRYPOINT ["ppcert"]
CMD ["--help"]
