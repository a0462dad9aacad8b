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
# Dependencies first, so a source change does not rebuild them.
COPY Cargo.toml Cargo.lock ./
COPY crates ./crates
COPY src ./src
COPY scenarios ./scenarios
COPY dialects ./dialects
COPY examples ./examples
RUN cargo build --release --locked --bin ppcert \
    && strip target/release/ppcert

FROM debian:bookworm-slim
# ca-certificates is left unpinned on purpose: it must track the distribution's security updates.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 ppcert \
    && mkdir -p /work/reports \
    && chmod 1777 /work /work/reports
COPY --from=build /src/target/release/ppcert /usr/local/bin/ppcert
USER 10001
WORKDIR /work
ENV CI=true
ENTRYPOINT ["ppcert"]
CMD ["--help"]
