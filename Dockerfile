# ppcert in a small image: build with the Rust toolchain, run on a slim Debian with only the
# binary and CA certificates. The evidence bundle is written under /work/reports: mount it.
#
#   docker build -t ppcert .
#   docker run --rm -v "$PWD/reports:/work/reports" \
#     -e PPCERT_TOKEN -e PPCERT_BASE_URL ppcert run
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
    && useradd --create-home --uid 10001 ppcert
COPY --from=build /src/target/release/ppcert /usr/local/bin/ppcert
USER 10001
WORKDIR /work
ENV CI=true
ENTRYPOINT ["ppcert"]
CMD ["--help"]
